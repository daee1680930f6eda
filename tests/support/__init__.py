"""Test support: the scripted fake language-model server and the fixtures that run it."""
