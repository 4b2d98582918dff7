//! Handing a batch's texts from the thread that reads them to the thread that encodes them, a
//! part at a time, each part as large as the reading got before the encoding asked for it.
//!
//! # Invariants
//!
//! * Parts arrive in the order they were sent, each exactly once; the receiver's iteration ends
//!   once the sender is dropped and every part sent has been received.
//! * `wanted` is set only by the receiver, when it has run out of parts, and cleared only by a
//!   send. So while the encoding is busy the reader keeps appending to the part it holds, and
//!   a batch read much faster than it encodes arrives in a few large parts rather than in many
//!   small ones: every part is a scheduler run of its own, with a publish, a wake-up and a drain
//!   tail, and every run after the reading ends is shared with the pool's helpers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, TryRecvError};

use super::Texts;

/// The two ends of a hand-over.
pub fn handover() -> (PartSender, PartReceiver) {
    let (sender, receiver) = mpsc::channel();
    let wanted = Arc::new(AtomicBool::new(false));
    (
        PartSender {
            sender,
            wanted: wanted.clone(),
        },
        PartReceiver { receiver, wanted },
    )
}

/// The reading end: sends parts.
pub struct PartSender {
    sender: mpsc::Sender<Texts>,
    wanted: Arc<AtomicBool>,
}

impl PartSender {
    /// Whether the encoding has run out of parts and waits for the next: time to send what has
    /// been read so far.
    pub fn is_wanted(&self) -> bool {
        // Relaxed: the flag only says when to send; the channel carries the part and orders it.
        self.wanted.load(Ordering::Relaxed)
    }

    /// Sends `part`. Fails, giving it back, only if the receiver is gone (the work has ended).
    pub fn send(&self, part: Texts) -> Result<(), Texts> {
        self.wanted.store(false, Ordering::Relaxed);
        self.sender.send(part).map_err(|e| e.0)
    }
}

/// The encoding end: iterating over `&PartReceiver` yields the parts, waiting for each.
pub struct PartReceiver {
    receiver: mpsc::Receiver<Texts>,
    wanted: Arc<AtomicBool>,
}

impl PartReceiver {
    /// The next part, waiting for it; `None` once the sender is gone and every part received.
    fn next_part(&self) -> Option<Texts> {
        match self.receiver.try_recv() {
            Ok(part) => Some(part),
            Err(TryRecvError::Disconnected) => None,
            Err(TryRecvError::Empty) => {
                self.wanted.store(true, Ordering::Relaxed);
                self.receiver.recv().ok()
            }
        }
    }
}

impl Iterator for &PartReceiver {
    type Item = Texts;

    fn next(&mut self) -> Option<Texts> {
        self.next_part()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn part(texts: &[&str]) -> Texts {
        let mut part = Texts::with_capacity(texts.len(), 0);
        for text in texts {
            part.push(text);
        }
        part
    }

    fn first_texts(parts: Vec<Texts>) -> Vec<String> {
        parts.iter().map(|part| part.get(0).to_owned()).collect()
    }

    #[test]
    fn parts_arrive_in_order_and_the_iteration_ends_with_the_sender() {
        let (sender, receiver) = handover();
        let reader = thread::spawn(move || {
            for i in 0..100 {
                assert!(sender.send(part(&[&i.to_string()])).is_ok());
            }
        });
        let received = first_texts((&receiver).collect());
        reader.join().unwrap();
        let expected: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        assert_eq!(received, expected);
    }

    #[test]
    fn a_part_is_wanted_only_once_the_receiver_ran_out() {
        let (sender, receiver) = handover();
        assert!(sender.send(part(&["a"])).is_ok());
        assert!(!sender.is_wanted(), "nobody asked yet");
        let mut parts = &receiver;
        assert_eq!(
            parts.next().map(|p| p.get(0).to_owned()).as_deref(),
            Some("a")
        );
        assert!(!sender.is_wanted(), "the part was there: no wait, no want");

        let waiting = thread::scope(|scope| {
            let waiting = scope.spawn(move || (&receiver).next().map(|p| p.get(0).to_owned()));
            while !sender.is_wanted() {
                thread::yield_now();
            }
            assert!(sender.send(part(&["b"])).is_ok());
            assert!(!sender.is_wanted(), "a send answers the want");
            waiting.join().unwrap()
        });
        assert_eq!(waiting.as_deref(), Some("b"));
    }

    #[test]
    fn a_receiver_that_waits_gets_a_part_sent_later() {
        let (sender, receiver) = handover();
        let reader = thread::spawn(move || {
            thread::sleep(std::time::Duration::from_millis(5));
            assert!(sender.send(part(&["late"])).is_ok());
        });
        let received = first_texts((&receiver).collect());
        reader.join().unwrap();
        assert_eq!(received, ["late"]);
    }

    #[test]
    fn a_send_after_the_receiver_is_gone_gives_the_part_back() {
        let (sender, receiver) = handover();
        drop(receiver);
        let back = sender.send(part(&["x"])).expect_err("nobody receives");
        assert_eq!(back.get(0), "x");
    }
}
