"""Loaders for the public datasets with human judgements that several families use."""
