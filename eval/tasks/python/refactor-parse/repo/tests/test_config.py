import unittest
from config import load_env, load_settings

class ConfigTest(unittest.TestCase):
    def test_settings(self):
        self.assertEqual(load_settings("a = 1\n# c\n\nb=two"), {"a": "1", "b": "two"})

    def test_env(self):
        self.assertEqual(load_env("path = /bin"), {"PATH": "/bin"})
