"""The Vision Transformer's pages (seed 003 section 9): their frame and controls (`vit_frame`: the image read, the
weights run), and each page's own views. Their context is the ViT's (session.use_vision): the step views of ui/views
draw its trace as they draw the text model's."""
