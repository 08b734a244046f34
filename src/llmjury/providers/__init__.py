"""Providers turn a `ChatRequest` into samples; `resolve` builds one from a parsed spec."""

from llmjury.providers.base import Provider, ProviderSpec, resolve

__all__ = ["Provider", "ProviderSpec", "resolve"]
