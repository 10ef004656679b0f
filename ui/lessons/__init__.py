"""The lessons of each page family: the blocks drawn alike in encoder and decoder (`blocks`, `formulas`), the
overview's diagram, positional encoding and embeddings, generation (and its beam tree), training and padded batches,
the animation, the derivations, and the sizes page's tables. A pure module's Streamlit views are `<name>_views`."""
