//! A synthetic stand-in for the downsampled MNIST digits of Pakman et al. (2017), §7.3.

use rand::RngExt;
use rayon::prelude::*;
use serde_json::json;

use super::{BLOCK_ROWS, Synthetic, check_rows, data_rng, normal};
use crate::data::Dataset;
use crate::error::Result;

/// Side of the images (7 × 7 pixels).
pub const DIGITS_7X7_SIDE: usize = 7;
/// Pixels per raw image (49).
pub const DIGITS_7X7_PIXELS: usize = DIGITS_7X7_SIDE * DIGITS_7X7_SIDE;
/// Number of classes (four digit shapes: 0, 1, 4, 7).
pub const DIGITS_7X7_CLASSES: usize = 4;
/// The paper's training-set size, N = 8,340.
pub const DIGITS_7X7_N: usize = 8_340;
/// The pixels (row, column), 0-based, that are 0 in every image and are removed: the four
/// corners and three pixels next to them.
pub const DIGITS_7X7_EMPTY: [(usize, usize); 7] =
    [(0, 0), (0, 1), (0, 6), (1, 0), (6, 0), (6, 5), (6, 6)];
/// Inputs after removing [`DIGITS_7X7_EMPTY`]: 49 − 7 = 42.
pub const DIGITS_7X7_INPUTS: usize = DIGITS_7X7_PIXELS - DIGITS_7X7_EMPTY.len();
/// Noise sd added to every pixel before clipping.
pub const DIGITS_7X7_NOISE_SD: f64 = 0.25;
/// Weight of the four neighbours' ink in a pixel (the blur of downsampling).
pub const DIGITS_7X7_BLUR: f64 = 0.25;

const TAG_DIGITS: u64 = u64::from_le_bytes(*b"digits77");

/// The four prototypes ('#' = ink), digits 0, 1, 4 and 7, none touching [`DIGITS_7X7_EMPTY`].
const PROTOTYPES: [[&str; DIGITS_7X7_SIDE]; DIGITS_7X7_CLASSES] = [
    ["..###..", ".#...#.", ".#...#.", ".#...#.", ".#...#.", ".#...#.", "..###.."],
    ["...#...", "..##...", "...#...", "...#...", "...#...", "...#...", "..###.."],
    [".......", ".#..#..", ".#..#..", ".#####.", "....#..", "....#..", "....#.."],
    ["..####.", ".....#.", "....#..", "....#..", "...#...", "...#...", "...#..."],
];

/// Ink of prototype `k` at (r, c), 0 outside the grid.
fn ink(k: usize, r: isize, c: isize) -> f64 {
    let side = DIGITS_7X7_SIDE as isize;
    if (0..side).contains(&r) && (0..side).contains(&c) {
        f64::from(u8::from(PROTOTYPES[k][r as usize].as_bytes()[c as usize] == b'#'))
    } else {
        0.0
    }
}

fn is_empty_pixel(r: usize, c: usize) -> bool {
    DIGITS_7X7_EMPTY.contains(&(r, c))
}

/// Indices r·7 + c of the 42 kept pixels, in row-major order: the columns of
/// [`digits_7x7`]'s data within [`digits_7x7_images`]' images.
pub fn digits_7x7_kept_pixels() -> Vec<usize> {
    (0..DIGITS_7X7_PIXELS)
        .filter(|&t| !is_empty_pixel(t / DIGITS_7X7_SIDE, t % DIGITS_7X7_SIDE))
        .collect()
}

/// One image of class `k` into `img` (49 values) from `rng`: see [`digits_7x7_images`].
fn draw_image(img: &mut [f64], rng: &mut tallmc_core::rng::ChainRng) -> usize {
    let k = rng.random_range(0..DIGITS_7X7_CLASSES);
    let shift = |u: f64| {
        if u < 0.25 {
            -1
        } else if u < 0.75 {
            0
        } else {
            1
        }
    };
    let dr: isize = shift(rng.random::<f64>());
    let dc: isize = shift(rng.random::<f64>());
    let a = 0.6 + 0.4 * rng.random::<f64>();
    for (t, px) in img.iter_mut().enumerate() {
        let (r, c) = (t / DIGITS_7X7_SIDE, t % DIGITS_7X7_SIDE);
        let noise = DIGITS_7X7_NOISE_SD * normal(rng);
        if is_empty_pixel(r, c) {
            *px = 0.0;
            continue;
        }
        let (sr, sc) = (r as isize - dr, c as isize - dc);
        let neighbours =
            ink(k, sr - 1, sc) + ink(k, sr + 1, sc) + ink(k, sr, sc - 1) + ink(k, sr, sc + 1);
        let stroke = (ink(k, sr, sc) + DIGITS_7X7_BLUR * neighbours).min(1.0);
        *px = (a * stroke + noise).clamp(0.0, 1.0);
    }
    k
}

/// Raw 7 × 7 images of four digit shapes and their labels: `n` rows of 49 pixels (row-major
/// within an image, rows of the result row-major) and `n` labels in {0, 1, 2, 3}.
///
/// Each image, from the ChaCha8 stream of its block (row i in block i / [`BLOCK_ROWS`], stream
/// = block, keyed by the seed and this generator's tag), draws in order:
///
/// 1. its class k uniform on {0, 1, 2, 3} (prototypes of the digits 0, 1, 4, 7 drawn as
///    one-pixel strokes on the 7 × 7 grid);
/// 2. a shift (Δr, Δc), each independently −1, 0, +1 with probabilities ¼, ½, ¼ (strokes
///    shifted off the grid are lost);
/// 3. an intensity a ~ U[0.6, 1);
/// 4. for each pixel in row-major order a noise ε ~ N(0, 0.25²) ([`DIGITS_7X7_NOISE_SD`]), and
///    the pixel value clip(a · min(1, s + ¼ Σ_{4 neighbours} s′) + ε, 0, 1), where s is the
///    shifted prototype's ink (0 or 1) — the ¼-weighted neighbours imitate the blur of
///    downsampling ([`DIGITS_7X7_BLUR`]).
///
/// The seven pixels of [`DIGITS_7X7_EMPTY`] (corners) are set to 0 in every image (their noise
/// is drawn and discarded); every other pixel is non-zero with probability ≥ ½ per image
/// (background noise is positive half the time), so for any realistic n those seven are exactly
/// the pixels that are 0 in every image. n must be in 1 ..= u32::MAX.
pub fn digits_7x7_images(n: usize, seed: u64) -> Result<(Vec<f64>, Vec<f64>)> {
    check_rows(n, 1)?;
    let p = DIGITS_7X7_PIXELS;
    let mut x = vec![0.0; n * p];
    let mut y = vec![0.0; n];
    x.par_chunks_mut(BLOCK_ROWS * p).zip(y.par_chunks_mut(BLOCK_ROWS)).enumerate().for_each(
        |(b, (xb, yb))| {
            let mut rng = data_rng(seed, TAG_DIGITS, b as u64);
            for (img, label) in xb.chunks_exact_mut(p).zip(yb.iter_mut()) {
                *label = draw_image(img, &mut rng) as f64;
            }
        },
    );
    Ok((x, y))
}

/// A synthetic stand-in for the data of Pakman et al. (2017, §7.3, "Neural Network Posterior
/// Sampling"): MNIST downsampled to 7 × 7, the pixels that are 0 in every training image
/// removed, four digits, N = 8,340 ([`DIGITS_7X7_N`]) — which tallmc cannot download.
///
/// The images of [`digits_7x7_images`] with the seven always-empty pixels
/// [`DIGITS_7X7_EMPTY`] removed: 42 inputs ([`DIGITS_7X7_INPUTS`], named `px{r}{c}`, 0-based
/// row and column, in row-major order) and labels in {0, 1, 2, 3}. With h = 4 hidden units the
/// network [`crate::SoftmaxMlp`] then has d = 42·4 + 4 + 4·4 + 4 = 192 parameters, the
/// paper's dimension. The paper does not say which digits or how many pixels were removed;
/// 7 removed pixels is the reading that gives d = 192 (shared/REFERENCES.md §5). `theta_true`
/// is empty (the data are not drawn from the network).
pub fn digits_7x7(n: usize, seed: u64) -> Result<Synthetic> {
    let (images, y) = digits_7x7_images(n, seed)?;
    let kept = digits_7x7_kept_pixels();
    let x: Vec<f64> = images
        .chunks_exact(DIGITS_7X7_PIXELS)
        .flat_map(|img| kept.iter().map(|&t| img[t]))
        .collect();
    let names =
        kept.iter().map(|&t| format!("px{}{}", t / DIGITS_7X7_SIDE, t % DIGITS_7X7_SIDE)).collect();
    let mut data = Dataset::new(x, y, names)?;
    super::tag(&mut data, "digits_7x7", "Pakman et al. 2017, section 7.3 (stand-in)", seed, None);
    data.set_metadata("classes", json!(DIGITS_7X7_CLASSES));
    data.set_metadata("removed_pixels", json!(DIGITS_7X7_EMPTY));
    Ok(Synthetic { data, theta_true: Vec::new() })
}
