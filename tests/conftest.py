"""Fixtures shared by the whole test suite."""

from support.fixtures import fake_openai, fake_openai_factory

__all__ = ["fake_openai", "fake_openai_factory"]
