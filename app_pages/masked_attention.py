from ui.lessons import blocks

# one page for both decoder attention blocks; this file is its address
blocks.decoder_attention_page("masked_attention")
