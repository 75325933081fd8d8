//! Images for the model: PNG, JPEG, GIF and WebP, recognised by their bytes (not their name),
//! refused above a hard cap, and downscaled (then re-encoded) when larger than what providers
//! take in one image — about 5 MB as base64, and a long side of 1568 pixels, beyond which
//! Anthropic scales down itself and every other provider charges more for no gain.

use std::io::Cursor;

/// Larger files are refused outright (they are not screenshots).
pub const MAX_INPUT: usize = 20 * 1024 * 1024;
/// Encoded images above this are downscaled (5 MB of base64).
pub const MAX_BYTES: usize = 3_750_000;
/// Longest side kept as is.
pub const MAX_SIDE: u32 = 1568;

/// An image ready to attach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// `image/png`, `image/jpeg`, …
    pub media_type: &'static str,
    /// The encoded bytes.
    pub data: Vec<u8>,
    /// What was done to it, when anything (`downscaled from 4000×3000 to 1568×1176`).
    pub note: Option<String>,
}

impl Prepared {
    /// As an image block's source (base64).
    pub fn source(&self) -> octo_agent::ImageSource {
        use base64::Engine;
        octo_agent::ImageSource {
            media_type: self.media_type.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(&self.data),
        }
    }
}

/// Why an image cannot be attached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// The bytes are no image of a kind models take.
    #[error("it is not a PNG, JPEG, GIF or WebP image (it looks like {0})")]
    NotAnImage(&'static str),
    /// Above the hard cap.
    #[error("it is {size}, more than the {limit} an attached image may be")]
    TooLarge {
        /// Its size.
        size: String,
        /// The cap.
        limit: String,
    },
    /// The image data is damaged.
    #[error("the image cannot be read: {0}")]
    Unreadable(String),
}

/// Checks `bytes` and makes them fit: recognised by magic bytes, refused above [`MAX_INPUT`],
/// downscaled when above [`MAX_BYTES`] or [`MAX_SIDE`].
pub fn prepare(bytes: &[u8]) -> Result<Prepared, ImageError> {
    use crate::sniff::{binary_kind, human_size, image_type};
    let Some(media_type) = image_type(bytes) else {
        let kind = if crate::sniff::looks_binary(bytes) { binary_kind(bytes) } else { "text" };
        return Err(ImageError::NotAnImage(kind));
    };
    if bytes.len() > MAX_INPUT {
        return Err(ImageError::TooLarge {
            size: human_size(bytes.len() as u64),
            limit: human_size(MAX_INPUT as u64),
        });
    }
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let (w, h) = reader.into_dimensions().map_err(|e| ImageError::Unreadable(e.to_string()))?;
    if bytes.len() <= MAX_BYTES && w.max(h) <= MAX_SIDE {
        return Ok(Prepared { media_type, data: bytes.to_vec(), note: None });
    }
    let img = image::load_from_memory(bytes).map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let mut side = MAX_SIDE.min(w.max(h));
    // Photos compress well as JPEG; anything with transparency stays PNG.
    let keep_alpha = img.color().has_alpha();
    loop {
        let small = img.resize(side, side, image::imageops::FilterType::Triangle);
        let mut out = Vec::new();
        let (format, media) = if keep_alpha {
            (image::ImageFormat::Png, "image/png")
        } else {
            (image::ImageFormat::Jpeg, "image/jpeg")
        };
        let encoded = if keep_alpha {
            small.write_to(&mut Cursor::new(&mut out), format)
        } else {
            small.to_rgb8().write_to(&mut Cursor::new(&mut out), format)
        };
        encoded.map_err(|e| ImageError::Unreadable(e.to_string()))?;
        if out.len() <= MAX_BYTES || side <= 256 {
            let note = format!("downscaled from {w}×{h} to {}×{}", small.width(), small.height());
            return Ok(Prepared { media_type: media, data: out, note: Some(note) });
        }
        side = side * 3 / 4;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn png(w: u32, h: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8])
        });
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn small_images_pass_large_ones_shrink_and_others_are_refused() {
        let small = png(40, 30);
        let p = prepare(&small).unwrap();
        assert_eq!((p.media_type, p.note.as_deref(), p.data.len()), ("image/png", None, small.len()));
        let wide = png(3200, 800);
        let p = prepare(&wide).unwrap();
        assert_eq!(p.media_type, "image/jpeg");
        assert!(p.note.as_deref().unwrap().contains("to 1568×392"), "{:?}", p.note);
        assert!(matches!(prepare(b"just some text named .png"), Err(ImageError::NotAnImage("text"))));
        assert!(matches!(prepare(b"%PDF-1.7 ...\0"), Err(ImageError::NotAnImage("PDF document"))));
        let mut huge = b"\x89PNG\r\n\x1a\n".to_vec();
        huge.resize(MAX_INPUT + 1, 0);
        assert!(matches!(prepare(&huge), Err(ImageError::TooLarge { .. })));
        let mut broken = small;
        broken.truncate(30);
        assert!(matches!(prepare(&broken), Err(ImageError::Unreadable(_)) | Ok(_)));
    }
}
