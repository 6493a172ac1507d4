//! The raw body of an upload form, cut off once it runs ahead of the fields read from it. The multipart
//! parser keeps in memory whatever it has not yet handed out as field data: a preamble or part headers
//! that never end would grow it without a limit, since `read_form` caps only the fields' data. Past
//! [`FORM_OVERHEAD`] bytes more than the fields delivered (boundaries, part headers and the parser's
//! read-ahead take a few KiB), the body ends in an error that `read_form` answers 413.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::error::PayloadError;
use actix_web::web::{Bytes, Payload};
use futures_util::Stream;

/// Bytes of a form body beyond its fields' data.
pub(crate) const FORM_OVERHEAD: usize = 1024 * 1024;

/// What `read_form` and the body share: the field data delivered, and whether the body was cut off.
#[derive(Clone, Default)]
pub(crate) struct Progress {
    delivered: Rc<Cell<usize>>,
    overrun: Rc<Cell<bool>>,
}

impl Progress {
    /// `bytes` more of field data were read.
    pub fn delivered(&self, bytes: usize) {
        self.delivered.set(self.delivered.get() + bytes);
    }

    /// Whether the body was cut off for running ahead of its fields.
    pub fn overrun(&self) -> bool {
        self.overrun.get()
    }
}

pub(crate) struct FormBody {
    payload: Payload,
    read: usize,
    progress: Progress,
}

impl FormBody {
    pub fn new(payload: Payload, progress: Progress) -> FormBody {
        FormBody {
            payload,
            read: 0,
            progress,
        }
    }
}

impl Stream for FormBody {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.progress.overrun() {
            return Poll::Ready(None);
        }
        let polled = Pin::new(&mut self.payload).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            self.read += chunk.len();
            if self.read > self.progress.delivered.get() + FORM_OVERHEAD {
                self.progress.overrun.set(true);
                return Poll::Ready(Some(Err(PayloadError::Overflow)));
            }
        }
        polled
    }
}
