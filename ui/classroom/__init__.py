"""The classroom: a teacher's room that students follow (`follow`, woken by `room_watch`), the class quiz (`quiz`, its
panel `quiz_views`), presenter mode for the projector (`presenter`) and the copy-link button (`share`)."""
