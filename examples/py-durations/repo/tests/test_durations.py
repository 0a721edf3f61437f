import unittest
from datetime import timedelta

from durations import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(parse_duration("90s"), timedelta(seconds=90))

    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), timedelta(hours=1, minutes=30))

    def test_days(self):
        self.assertEqual(parse_duration("2d"), timedelta(days=2))

    def test_units_are_case_insensitive(self):
        self.assertEqual(parse_duration("1H"), timedelta(hours=1))

    def test_milliseconds(self):
        self.assertEqual(parse_duration("250ms"), timedelta(milliseconds=250))

    def test_garbage_is_rejected(self):
        with self.assertRaises(ValueError):
            parse_duration("banana")

    def test_empty_is_rejected(self):
        with self.assertRaises(ValueError):
            parse_duration("")


if __name__ == "__main__":
    unittest.main()
