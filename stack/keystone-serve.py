"""Sets up and serves a test Keystone in one Python process (stack/keystone.ts runs it).

    python keystone-serve.py KEYSTONE_CONF PORT_FILE

Binds 127.0.0.1 on a port the OS picks, then runs what keystone-manage would
(db_sync, fernet_setup, credential_setup, bootstrap with the public, internal
and admin identity endpoints on that port; the admin password comes from
OS_BOOTSTRAP_PASSWORD), writes the port to PORT_FILE, and serves Keystone's
WSGI application with the standard library's threaded WSGI server until
killed. One process instead of five keystone-manage runs: each would import
Keystone again, about 3 s apiece.
"""

import grp
import os
import pwd
import socketserver
import sys
from wsgiref import simple_server


class ThreadedServer(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True


class QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    conf, port_file = sys.argv[1], sys.argv[2]
    # oslo.config reads sys.argv; Keystone's own options come from the file only.
    sys.argv = sys.argv[:1]
    server = simple_server.make_server('127.0.0.1', 0, None, server_class=ThreadedServer, handler_class=QuietHandler)
    port = server.server_port
    url = 'http://127.0.0.1:%d/v3' % port

    from keystone.cmd import cli
    import keystone.conf

    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    owner = ['--keystone-user', user, '--keystone-group', group]
    steps = [
        ['db_sync'],
        ['fernet_setup'] + owner,
        ['credential_setup'] + owner,
        ['bootstrap', '--bootstrap-region-id', 'RegionOne', '--bootstrap-public-url', url,
         '--bootstrap-internal-url', url, '--bootstrap-admin-url', url],
    ]
    for step in steps:
        cli.main(argv=['keystone-manage', '--config-file', conf] + step)
        # keystone-manage runs once per process: forget its parsed options before the next step.
        keystone.conf.CONF.reset()
        keystone.conf.CONF.unregister_opt(cli.command_opt)

    from keystone.common import provider_api
    from keystone.server import wsgi

    # The steps above registered Keystone's managers; the application registers its own.
    provider_api.ProviderAPIs._clear_registry_instances()
    os.environ['OS_KEYSTONE_CONFIG_FILES'] = conf
    server.set_app(wsgi.initialize_public_application())
    with open(port_file + '.tmp', 'w') as f:
        f.write(str(port))
    os.rename(port_file + '.tmp', port_file)
    server.serve_forever()


if __name__ == '__main__':
    main()
