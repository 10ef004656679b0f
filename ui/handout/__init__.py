"""The handout: the current example's every step on paper (HTML with MathML, or Markdown), from the app or the CLI."""
