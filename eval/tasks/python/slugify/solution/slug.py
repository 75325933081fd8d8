import re
import unicodedata


def slugify(text):
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.split(r"[^a-z0-9]+", plain.lower())
    return "-".join(w for w in words if w)
