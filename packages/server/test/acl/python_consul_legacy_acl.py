"""Stock python-consul (Debian python3-consul), unpatched: its `acl` methods, which call Consul's
legacy ACL API, against registry. Run by acl-legacy.test.ts: python3 this.py HOST PORT TOKEN.
Each step prints `ok <step>`; the first failure raises (traceback, non-zero exit).
"""
import sys

import consul

host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = consul.Consul(host=host, port=port, token=token)


def ok(step):
    print('ok ' + step, flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


rules = 'key "py/" { policy = "write" }'
acl_id = c.acl.create(name='py legacy', type='client', rules=rules)
expect(isinstance(acl_id, str) and len(acl_id) == 36, 'acl.create id: %r' % acl_id)
ok('acl.create')

info = c.acl.info(acl_id)
expect(info['ID'] == acl_id and info['Name'] == 'py legacy' and info['Type'] == 'client' and info['Rules'] == rules,
       'acl.info: %r' % info)
expect(c.acl.info('no-such-token') is None, 'acl.info of an unknown id is None')
ok('acl.info')

# The new token does what its legacy rules say.
own = consul.Consul(host=host, port=port, token=acl_id)
expect(own.kv.put('py/x', 'v') is True, 'kv.put under py/ with the legacy token')
try:
    own.kv.put('elsewhere', 'v')
    raise AssertionError('kv.put outside py/ was accepted')
except consul.ACLPermissionDenied:
    pass
ok('legacy token enforced')

listed = c.acl.list()
expect(acl_id in [t['ID'] for t in listed] and token in [t['ID'] for t in listed], 'acl.list: %r' % listed)
try:
    own.acl.list()
    raise AssertionError('acl.list with a client token was accepted')
except consul.ACLPermissionDenied:
    pass
ok('acl.list')

expect(c.acl.update(acl_id, name='py renamed', rules=rules) == acl_id, 'acl.update')
expect(c.acl.info(acl_id)['Name'] == 'py renamed', 'renamed')
ok('acl.update')

clone_id = c.acl.clone(acl_id)
expect(clone_id != acl_id and c.acl.info(clone_id)['Rules'] == rules, 'acl.clone')
ok('acl.clone')

chosen = c.acl.create(name='chosen', type='management', acl_id='py-chosen-secret')
expect(chosen == 'py-chosen-secret' and c.acl.info(chosen)['Type'] == 'management', 'create with acl_id')
ok('acl.create with an ID')

for i in (acl_id, clone_id, chosen):
    expect(c.acl.destroy(i) is True, 'acl.destroy %s' % i)
    expect(c.acl.info(i) is None, 'destroyed %s' % i)
ok('acl.destroy')
