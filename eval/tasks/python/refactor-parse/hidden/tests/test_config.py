import inspect
import unittest
import config
from config import load_env, load_settings, parse_pairs

class ConfigTest(unittest.TestCase):
    def test_settings(self):
        self.assertEqual(load_settings("a = 1\n# c\n\nb=two"), {"a": "1", "b": "two"})

    def test_env(self):
        self.assertEqual(load_env("path = /bin"), {"PATH": "/bin"})

    def test_parse_pairs(self):
        self.assertEqual(parse_pairs([" x = y ", "#no", "", "z="]), {"x": "y", "z": ""})

    def test_one_parser(self):
        for f in (config.load_settings, config.load_env):
            self.assertIn("parse_pairs", inspect.getsource(f))
            self.assertNotIn("partition", inspect.getsource(f))
