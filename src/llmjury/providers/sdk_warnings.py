"""Warnings the providers' SDKs raise that no user of llmjury can act on, ignored in pytest runs.

google-genai defines a subclass of aiohttp's ClientSession for each event loop's session, and aiohttp
warns against such subclasses: a DeprecationWarning at a process's first `gemini:` call. In a project
whose pytest configuration turns warnings into errors (`filterwarnings = error`), that warning failed
every `gemini:` call. These filters are added after the project's `filterwarnings` lines, so they
win over them; a `-W` on the command line comes after them.
"""

from __future__ import annotations

#: `filterwarnings` lines, as in an ini file.
IGNORED = ("ignore:Inheritance class AiohttpClientSession from ClientSession is discouraged:DeprecationWarning",)
