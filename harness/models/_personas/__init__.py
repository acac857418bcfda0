"""Seeded personas that simulate typical model behaviour, with exact replay."""
