//! The per-turn write hook of `watch`: sessions that gained turns are queued to one worker
//! thread, which runs the unforced hook (spec 02 §2.6) for each in turn, so a model call of
//! minutes never delays the next import.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use scriptorium_backend_api::layers::writer_runtime::Runtime;

/// The worker and its queue.
pub(crate) struct Writes {
    queue: Option<Sender<String>>,
    worker: Option<JoinHandle<()>>,
}

impl Writes {
    /// Start the worker over `runtime`.
    pub(crate) fn start(runtime: Arc<Runtime>) -> std::io::Result<Writes> {
        let (queue, inbox) = channel::<String>();
        let worker = std::thread::Builder::new()
            .name("scriptorium-watch-writes".into())
            .spawn(move || work(&runtime, &inbox))?;
        Ok(Writes { queue: Some(queue), worker: Some(worker) })
    }

    /// Queue the write hook for `sessions`.
    pub(crate) fn queue(&self, sessions: &BTreeSet<String>) {
        if let Some(queue) = &self.queue {
            for session in sessions {
                let _ = queue.send(session.clone());
            }
        }
    }

    /// Close the queue; the worker ends after the write in progress, if any. Not waited for:
    /// the process exits and an interrupted install is recovered by the next open (spec 04).
    pub(crate) fn close(mut self) -> Option<JoinHandle<()>> {
        self.queue = None;
        self.worker.take()
    }
}

fn work(runtime: &Runtime, inbox: &Receiver<String>) {
    while let Ok(first) = inbox.recv() {
        // Collapse what queued up meanwhile: one hook per session is enough.
        let mut due = BTreeSet::from([first]);
        due.extend(inbox.try_iter());
        for session in due {
            match runtime.hook(&session, None, false) {
                None => eprintln!("scriptorium watch: session {session}: write hook done"),
                Some(failure) => eprintln!(
                    "scriptorium watch: session {session}: write failed: error[{}]: {}",
                    failure.reason_code, failure.reason
                ),
            }
        }
    }
}
