"""The classroom: a teacher's room that students follow (`follow`, woken by `room_watch`), presenter mode for the
projector (`presenter`) and the copy-link button (`share`)."""
