import unittest
from datetime import timedelta

from durations import parse_duration


class ParseDurationHeldOut(unittest.TestCase):
    def test_fractional_numbers(self):
        self.assertEqual(parse_duration("1.5h"), timedelta(minutes=90))
        self.assertEqual(parse_duration("0.25s"), timedelta(milliseconds=250))
        self.assertEqual(parse_duration("2.5d"), timedelta(days=2, hours=12))

    def test_weeks(self):
        self.assertEqual(parse_duration("2w"), timedelta(days=14))

    def test_whitespace(self):
        self.assertEqual(parse_duration("1h 30m"), timedelta(minutes=90))
        self.assertEqual(parse_duration("  45s\n"), timedelta(seconds=45))
        self.assertEqual(parse_duration("1d\t2h  3m 4s"), timedelta(days=1, hours=2, minutes=3, seconds=4))

    def test_minutes_versus_milliseconds(self):
        self.assertEqual(parse_duration("1m1ms"), timedelta(minutes=1, milliseconds=1))
        self.assertEqual(parse_duration("1500MS"), timedelta(seconds=1.5))
        self.assertEqual(parse_duration("3m"), timedelta(minutes=3))

    def test_parts_are_summed(self):
        self.assertEqual(parse_duration("1h1h"), timedelta(hours=2))
        self.assertEqual(parse_duration("0s"), timedelta(0))

    def test_generated_combinations(self):
        units = [("w", timedelta(weeks=1)), ("d", timedelta(days=1)), ("h", timedelta(hours=1)),
                 ("m", timedelta(minutes=1)), ("s", timedelta(seconds=1)), ("ms", timedelta(milliseconds=1))]
        for i in range(1, 64):
            text, want = "", timedelta(0)
            for bit, (unit, size) in enumerate(units):
                if i & (1 << bit):
                    n = (i * 7 + bit * 13) % 97
                    text += f"{n}{unit}"
                    want += n * size
            with self.subTest(text=text):
                self.assertEqual(parse_duration(text), want)

    def test_rejects_malformed_input(self):
        for bad in ["10", "1h30", "1x", "h", "   ", "1h,30m", "-5s", "+5s", "1.5.2h", ".5h",
                    "1 h", "5sec", "1hour", "1h30m!", "ms", "1mss", "1h-30m"]:
            with self.subTest(text=bad):
                with self.assertRaises(ValueError):
                    parse_duration(bad)


if __name__ == "__main__":
    unittest.main()
