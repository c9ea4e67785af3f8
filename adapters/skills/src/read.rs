//! Reading a served file at `resources/read`: only a file the last scan listed, opened
//! without following a link in its last component and without blocking (a FIFO swapped in
//! after the scan), refused unless its directory is still beneath the root, and served only
//! when its bytes are the ones the manifest describes (size and digest): whatever is swapped
//! in between the scan and the read is never served (SEP-2640 § Resources: manifests
//! "computed from the bytes served").

use std::io::Read as _;
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, fstat};

use crate::scan::{File, sha256};

/// Why a read did not serve the file.
#[derive(Debug)]
pub enum Refused {
    /// The bytes are not the listed ones (changed since the scan): scan again.
    Changed,
    /// It can no longer be opened as a regular file beneath the root.
    Gone(String),
}

/// The bytes of `file`, checked against its manifest entry.
pub fn read(root: &Path, file: &File) -> Result<Vec<u8>, Refused> {
    let parent = file.path.parent().and_then(|p| std::fs::canonicalize(p).ok());
    if !parent.is_some_and(|p| p.starts_with(root)) {
        return Err(Refused::Gone("its directory is no longer beneath the root".into()));
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(&file.path, flags, Mode::empty()).map_err(|e| Refused::Gone(e.to_string()))?;
    let stat = fstat(&fd).map_err(|e| Refused::Gone(e.to_string()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(Refused::Gone("no longer a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(file.size).unwrap_or(0));
    // One byte past the listed size is enough to know it changed.
    std::fs::File::from(fd).take(file.size + 1).read_to_end(&mut bytes).map_err(|e| Refused::Gone(e.to_string()))?;
    if bytes.len() as u64 != file.size || sha256(&bytes) != file.digest {
        return Err(Refused::Changed);
    }
    Ok(bytes)
}
