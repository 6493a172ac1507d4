//! What a service writes to disk is its owner's alone: the SQLite files, the secret key, transcripts and
//! audio in the local object store, the embedded search index with its lock files. Rather than change the
//! mode of each file after every library that creates one (tantivy and SQLite choose their own), a
//! process takes group and other permissions away from everything it creates, once, at start.

/// Sets the process's file-creation mask to 077: files it creates from now on are 0600 at most and
/// directories 0700, whatever the library that creates them asks for.
pub fn keep_new_files_private() {
    #[cfg(unix)]
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
}
