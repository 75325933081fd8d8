import unittest
from models import Item
from report import line

class ReportTest(unittest.TestCase):
    def test_line(self):
        self.assertEqual(line(Item("Tea", 3.5)), "Tea: 3.50 EUR")
        self.assertEqual(line(Item("Cake", 12, "CHF")), "Cake: 12.00 CHF")
