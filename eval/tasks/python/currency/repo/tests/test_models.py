import unittest
from models import Item

class ItemTest(unittest.TestCase):
    def test_fields(self):
        item = Item("Tea", 3.5)
        self.assertEqual((item.name, item.price), ("Tea", 3.5))
