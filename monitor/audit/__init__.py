"""File and process audit: who wrote which file under the work dir, and which forbidden tools ran."""
