//! The interactive shell in a real pseudo-terminal (a detached tmux session): a multi-line
//! entry, the up arrow recalling history, the output on screen, and the history file.
//! Needs `tmux` on the PATH.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (a private socket), killed on drop.
struct Terminal {
    socket: String,
}

impl Terminal {
    fn start(command: &str, directory: &Path) -> Terminal {
        let socket = format!("spillway-test-{}", std::process::id());
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-s",
                "shell",
                "-x",
                "160",
                "-y",
                "60",
            ])
            .arg(command)
            .current_dir(directory)
            .status()
            .expect("tmux is required by this test: install it (apt-get install tmux)");
        assert!(status.success(), "tmux could not start the shell");
        Terminal { socket }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "shell", "-l", text]);
        self.tmux(&["send-keys", "-t", "shell", "Enter"]);
    }

    fn press(&self, key: &str) {
        self.tmux(&["send-keys", "-t", "shell", key]);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "shell", "-S", "-200"])
    }

    /// Waits until the screen shows `expected` `times` times.
    fn wait_for(&self, expected: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.matches(expected).count() >= times {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {expected:?} x{times}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

#[test]
fn multi_line_entries_history_and_output_in_a_terminal() {
    let directory = tempfile::tempdir().unwrap();
    let history = directory.path().join("history");
    let command = format!(
        "SPILLWAY_HISTORY={} {} shell db",
        history.display(),
        env!("CARGO_BIN_EXE_spillway")
    );
    let terminal = Terminal::start(&command, directory.path());
    terminal.wait_for("spillway>", 1);

    // One entry over three lines: Enter does not submit while a bracket is open.
    terminal.type_line("db.books.insertOne({");
    terminal.type_line("  _id: 1, title: 'Dune'");
    terminal.type_line("})");
    terminal.wait_for("{ acknowledged: true, insertedId: 1 }", 1);

    terminal.type_line("db.books.find()");
    terminal.wait_for("[ { _id: 1, title: 'Dune' } ]", 1);
    terminal.type_line("db.books.insertOne({ _id: 2 })");
    terminal.wait_for("{ acknowledged: true, insertedId: 2 }", 1);

    // Up twice recalls `db.books.find()`; Enter runs it again.
    terminal.press("Up");
    terminal.press("Up");
    terminal.press("Enter");
    let screen = terminal.wait_for("[ { _id: 1, title: 'Dune' }, { _id: 2 } ]", 1);
    assert_eq!(screen.matches("db.books.find()").count(), 2, "{screen}");

    // A bad line says why and changes nothing.
    terminal.type_line("db.books.insertOne({ _id: 3 title: 'x' })");
    terminal.wait_for("SyntaxError: expected ',' or '}' after a field", 1);
    terminal.type_line("db.books.countDocuments()");
    terminal.wait_for("\n2\n", 1);

    terminal.type_line("exit");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !history.exists() {
        assert!(
            Instant::now() < deadline,
            "the history file was not written"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(saved.contains("db.books.find()"), "{saved}");
    assert!(saved.contains("title: 'Dune'"), "{saved}");
}
