raise RuntimeError("model file failed on purpose")
