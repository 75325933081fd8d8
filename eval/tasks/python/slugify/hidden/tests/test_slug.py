import unittest
from slug import slugify

class SlugTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation(self):
        self.assertEqual(slugify("  Rust, Go & C++!  "), "rust-go-c")

    def test_accents(self):
        self.assertEqual(slugify("Crème Brûlée"), "creme-brulee")

    def test_digits(self):
        self.assertEqual(slugify("Top 10 tips"), "top-10-tips")

    def test_empty(self):
        self.assertEqual(slugify("--- !!! ---"), "")
