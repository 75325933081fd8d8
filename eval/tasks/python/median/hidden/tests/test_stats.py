import unittest
from stats import median

class MedianTest(unittest.TestCase):
    def test_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_two(self):
        self.assertEqual(median([10, 20]), 15)

    def test_unsorted_floats(self):
        self.assertAlmostEqual(median([0.5, -1.0, 7.25, 3.0]), 1.75)

    def test_empty(self):
        with self.assertRaises(ValueError):
            median([])

    def test_input_untouched(self):
        values = [3, 1, 2, 0]
        median(values)
        self.assertEqual(values, [3, 1, 2, 0])
