"""Reading questions and sentences: key terms, answer types, names, decomposition."""
