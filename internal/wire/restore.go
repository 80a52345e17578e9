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
	if proto == 3 {
		cmds = append(cmds, helloArgs(cfg))
	} else {
		if auth := authArgs(cfg); auth != nil {
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
