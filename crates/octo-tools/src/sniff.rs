//! Telling text from binary, and naming common binary formats.

/// An image type the model can be shown, by magic bytes.
pub fn image_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(b"\xFF\xD8\xFF") {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// A short name for a binary format, by magic bytes.
pub fn binary_kind(head: &[u8]) -> &'static str {
    const KINDS: &[(&[u8], &str)] = &[
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "ZIP archive (or docx/xlsx/jar)"),
        (b"\x1F\x8B", "gzip archive"),
        (b"\x7FELF", "ELF executable"),
        (b"MZ", "Windows executable"),
        (b"\xCF\xFA\xED\xFE", "Mach-O executable"),
        (b"\xFE\xED\xFA\xCF", "Mach-O executable"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"\x00asm", "WebAssembly module"),
        (b"BZh", "bzip2 archive"),
        (b"\xFD7zXZ\x00", "xz archive"),
        (b"7z\xBC\xAF\x27\x1C", "7-Zip archive"),
        (b"\x28\xB5\x2F\xFD", "zstd archive"),
    ];
    if let Some(img) = image_type(head) {
        return img;
    }
    KINDS.iter().find(|(magic, _)| head.starts_with(magic)).map(|(_, k)| *k).unwrap_or("binary data")
}

/// Whether content looks binary: a NUL byte in its first 8 KiB (what git and ripgrep use).
pub fn looks_binary(head: &[u8]) -> bool {
    head.iter().take(8192).any(|&b| b == 0) || image_type(head).is_some() || head.starts_with(b"%PDF")
}

/// A human size: `512 B`, `3.4 KB`, `12.0 MB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_formats() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(binary_kind(b"\x7FELF\x02\x01"), "ELF executable");
        assert_eq!(binary_kind(b"\x00\x01\x02"), "binary data");
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary("héllo\nworld".as_bytes()));
        assert_eq!(human_size(10), "10 B");
        assert_eq!(human_size(10 * 1024 * 1024), "10.0 MB");
    }
}
