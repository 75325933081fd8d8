import unittest
from models import Item

class ItemTest(unittest.TestCase):
    def test_fields(self):
        item = Item("Tea", 3.5)
        self.assertEqual((item.name, item.price), ("Tea", 3.5))

    def test_currency(self):
        self.assertEqual(Item("Tea", 3.5).currency, "EUR")
        self.assertEqual(Item("Tea", 3.5, "USD").currency, "USD")
