def parse_pairs(lines):
    out = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out


def load_settings(text):
    return parse_pairs(text.splitlines())


def load_env(text):
    return {k.upper(): v for k, v in parse_pairs(text.splitlines()).items()}
