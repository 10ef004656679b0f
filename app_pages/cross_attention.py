from ui.lessons import blocks

blocks.decoder_attention_page("cross_attention")  # one page for both decoder attention blocks; this file is its address
