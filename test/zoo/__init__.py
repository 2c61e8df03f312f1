"""The model zoo: tiny random-initialised Hugging Face architectures (`architectures.py`), run by `run.py`."""
