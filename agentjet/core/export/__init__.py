"""Trained steps out to the tools people use: the PEFT adapter, a merged Hugging Face model, GGUF for llama.cpp.

gguf_file.py  A merged Llama-family model folder -> one GGUF file for llama.cpp, written with the `gguf` package.
weights.py    A trained step's weights out of a state dir: the PEFT adapter as is, or merged into its base model.
"""
