mod hooks;
