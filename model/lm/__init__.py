"""The language model: the tiny LM and its float reference, training on the pydoc text, and what
a window changes in its readings."""
