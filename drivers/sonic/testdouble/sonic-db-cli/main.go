// Command sonic-db-cli is the SONiC test double's sonic-db-cli (and, when
// linked as config, show or sudo, its CLI commands): a fabricbench test
// double, not SONiC's tool. See package testdouble.
//
//	go build -o bin/sonic-db-cli ./drivers/sonic/testdouble/sonic-db-cli
//	SONIC_DB_CONFIG_FILE=database_config.json bin/sonic-db-cli CONFIG_DB HGETALL 'PORT|Ethernet0'
package main

import (
	"os"

	"github.com/fabricbench/fabricbench/drivers/sonic/testdouble"
)

func main() {
	args := os.Args
	if !testdouble.IsTool(args[0]) {
		// Built under another name: act as sonic-db-cli.
		args = append([]string{"sonic-db-cli"}, args[1:]...)
	}
	os.Exit(testdouble.Main(args, os.Stdout, os.Stderr))
}
