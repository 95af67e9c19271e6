// The Vault operator's process: wiring only (filled in with the controller; see reconcile/).
throw new Error("the Vault operator's controller is not wired yet");
