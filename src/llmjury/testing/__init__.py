"""Local stand-ins for provider APIs, for tests and benchmarks: real HTTP on 127.0.0.1."""

from llmjury.testing.fake_gemini import FakeGemini
from llmjury.testing.fake_openai import LLAMA_CPP, OPENAI, FakeOpenAI, ServerBehaviour
from llmjury.testing.fake_server import FakeChoice, FakeServer, Fault

__all__ = ["LLAMA_CPP", "OPENAI", "FakeChoice", "FakeGemini", "FakeOpenAI", "FakeServer", "Fault", "ServerBehaviour"]
