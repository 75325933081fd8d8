//! A quick look at a file before llama.cpp loads it: a clear error for what is not a GGUF.

use crate::LocalError;
use std::io::Read;
use std::path::Path;

/// Checks that `path` is a readable GGUF file (magic, a known version, a plausible header).
/// Truncation past the header is found by llama.cpp when it loads the file.
pub fn check_gguf(path: &Path) -> Result<(), LocalError> {
    let read = |source| LocalError::Read { path: path.to_path_buf(), source };
    let meta = std::fs::metadata(path).map_err(read)?;
    let not = |why: String| LocalError::NotGguf { path: path.to_path_buf(), why };
    if !meta.is_file() {
        return Err(not("not a regular file".into()));
    }
    let mut head = [0u8; 24];
    let mut f = std::fs::File::open(path).map_err(read)?;
    let n = f.read(&mut head).map_err(read)?;
    if n < 24 {
        return Err(not(format!("only {n} bytes")));
    }
    if &head[..4] != b"GGUF" {
        return Err(not(format!("it starts with {:?}", String::from_utf8_lossy(&head[..4]))));
    }
    let version = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if !(2..=3).contains(&version) {
        return Err(not(format!("GGUF version {version}, not 2 or 3")));
    }
    let tensors =
        u64::from_le_bytes([head[8], head[9], head[10], head[11], head[12], head[13], head[14], head[15]]);
    if tensors == 0 || tensors > 1_000_000 {
        return Err(not(format!("a header announcing {tensors} tensors")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_are_named_not_gguf() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.gguf");
        std::fs::write(&text, "just some text, long enough to have a header").unwrap();
        let e = check_gguf(&text).unwrap_err().to_string();
        assert!(e.contains("is not a GGUF model") && e.contains("starts with"), "{e}");
        let short = dir.path().join("short.gguf");
        std::fs::write(&short, b"GGUF").unwrap();
        assert!(check_gguf(&short).unwrap_err().to_string().contains("only 4 bytes"));
        let mut v9 = b"GGUF".to_vec();
        v9.extend(9u32.to_le_bytes());
        v9.extend([0u8; 16]);
        let bad = dir.path().join("v9.gguf");
        std::fs::write(&bad, v9).unwrap();
        assert!(check_gguf(&bad).unwrap_err().to_string().contains("version 9"));
        assert!(check_gguf(&dir.path().join("missing.gguf"))
            .unwrap_err()
            .to_string()
            .contains("cannot read"));
    }
}
