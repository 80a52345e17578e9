package wire

import "strconv"

// RestoreCommands returns the commands that bring a connection its user
// changed back to the state the handshake left it in, for a connection
// that negotiated proto: RESET first (Redis 6.2 and later), which ends a
// transaction, forgets WATCHed keys, turns tracking and reply suppression
// off, selects database 0, clears the name, deauthenticates and switches
// to RESP2; then the handshake's own commands restore protocol, user,
// name and database. Every reply must be a success; an error (a server
// without RESET, a changed password) means the connection cannot be
// restored and must be closed. The commands hold the password: never log
// them.
func RestoreCommands(cfg Config, proto int) [][]string {
	cmds := [][]string{{"RESET"}}
	user := cfg.Username
	if proto == 3 {
		hello := []string{"HELLO", "3"}
		if cfg.Password != "" {
			if user == "" {
				user = "default"
			}
			hello = append(hello, "AUTH", user, cfg.Password)
		}
		if cfg.ClientName != "" {
			hello = append(hello, "SETNAME", cfg.ClientName)
		}
		cmds = append(cmds, hello)
	} else {
		if cfg.Password != "" {
			auth := []string{"AUTH", cfg.Password}
			if user != "" {
				auth = []string{"AUTH", user, cfg.Password}
			}
			cmds = append(cmds, auth)
		}
		if cfg.ClientName != "" {
			cmds = append(cmds, []string{"CLIENT", "SETNAME", cfg.ClientName})
		}
	}
	if cfg.DB != 0 {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(cfg.DB)})
	}
	return cmds
}
