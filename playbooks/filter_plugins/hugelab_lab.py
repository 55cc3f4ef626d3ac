"""hugelab filters: who owns a lab domain, and the host values validation
reads (ansible.cfg's filter_plugins; unit tests in
playbooks/tests/test_owner.py).

Lab domains are known by name, and two checkouts with the default
inventory on one host (a developer's second clone, a CI run beside a
user's lab) use the same names.  So every lab domain carries its owner in
its metadata, `<hugelab:owner>`: the checkout's real path and the real
paths of the inventory sources, e.g.

    /work/hugelab#/work/hugelab/inventory

The fleet role writes it; the fleet role, teardown.yml and validation
refuse to touch (redefine, destroy, undefine, count as ours) a lab domain
whose owner is another one.  A lab domain without an owner (defined before
owners existed) is adopted by the checkout whose guest it is.
"""
import os
import xml.etree.ElementTree as ET


def checkout_top(path):
    """The checkout a path lies in: the nearest directory (the path itself
    or a parent) that holds site.yml and playbooks/; the path itself when
    there is none."""
    real = os.path.realpath(path)
    top = real
    while True:
        if (os.path.isfile(os.path.join(top, 'site.yml'))
                and os.path.isdir(os.path.join(top, 'playbooks'))):
            return top
        parent = os.path.dirname(top)
        if parent == top:
            return real
        top = parent


def lab_owner(repo, sources):
    """The owner id of this checkout and inventory."""
    if isinstance(sources, str):
        sources = [sources]
    return '%s#%s' % (checkout_top(repo), ','.join(
        os.path.realpath(s) for s in sources))


def lab_domain_meta(xml, ns):
    """What a domain's XML says of the lab: {lab, owner, config,
    hypervisor, dir} (lab false and the rest None for a domain without
    metadata in ns; an absent element is None)."""
    out = {'lab': False, 'owner': None, 'config': None, 'hypervisor': None,
           'dir': None}
    if not xml:
        return out
    root = ET.fromstring(xml)
    meta = root.find('metadata')
    if meta is None:
        return out
    for child in meta:
        if not child.tag.startswith('{%s}' % ns):
            continue
        out['lab'] = True
        for key in ('owner', 'config', 'hypervisor', 'dir'):
            el = child.find('{%s}%s' % (ns, key))
            if el is not None and el.text is not None:
                out[key] = el.text.strip()
    return out


def lab_domain_refusal(xml, ns, owner, name, where):
    """'' when this owner may redefine, start, destroy or undefine the
    domain (absent, or a lab domain of this owner or of none); else the
    one-line reason naming the domain and who holds it."""
    if not xml:
        return ''
    meta = lab_domain_meta(xml, ns)
    if not meta['lab']:
        return ("domain '%s' on %s is not a lab domain (no metadata in %s): "
                'the lab leaves it alone (rename the guest or remove that '
                'domain)' % (name, where, ns))
    if meta['owner'] and meta['owner'] != owner:
        return ("domain '%s' on %s is another hugelab checkout's lab domain "
                '(owner %s; this is %s): the lab leaves it alone (rename the '
                "guest's domain_name, or tear that fleet down: %s)"
                % (name, where, meta['owner'], owner,
                   teardown_hint(meta['owner'])))
    return ''


def teardown_hint(owner):
    """How the owner of a domain removes it: teardown.yml run in its
    checkout with its inventory."""
    checkout, _, inventory = owner.partition('#')
    return 'cd %s && ansible-playbook -i %s playbooks/teardown.yml' % (
        checkout, inventory.replace(',', ' -i '))


def lab_needs_define(xml, ns, owner, config):
    """Whether the domain must be (re)defined: absent, or its metadata
    differs from what this run would write (another config hash, or no
    owner yet).  The caller refused another owner's domain before."""
    if not xml:
        return True
    meta = lab_domain_meta(xml, ns)
    return meta['config'] != config or meta['owner'] != owner


def lab_teardown_pick(results, ns, owner, mine, hypervisor, scope):
    """Of get_xml results ({item: name, get_xml: xml}): the lab domains
    teardown removes on this hypervisor ({name, dir}) and the ones it
    leaves to their owner ('NAME (owner OWNER)').  scope inventory: the
    domains named in `mine` (this inventory's guests on this hypervisor)
    whose <hugelab:hypervisor>, when present, is this one; scope all:
    every lab domain there.  Either way only this owner's or no owner's."""
    remove, others = [], []
    for res in results:
        name, xml = res.get('item'), res.get('get_xml')
        if not xml:
            continue
        meta = lab_domain_meta(xml, ns)
        if not meta['lab']:
            continue
        if scope != 'all':
            if name not in mine:
                continue
            if meta['hypervisor'] not in (None, hypervisor):
                continue
        if meta['owner'] and meta['owner'] != owner:
            others.append('%s (owner %s)' % (name, meta['owner']))
            continue
        remove.append({'name': name, 'dir': meta['dir'] or ''})
    return {'remove': remove, 'others': others}


def lab_host_values(hostvars, hosts, keys):
    """{host: {key: value}} of the keys each host has, as Ansible templates
    them (a key a host does not have stays absent)."""
    out = {}
    for host in hosts:
        hv = hostvars[host]
        out[host] = {}
        for k in keys:
            if k not in hv:
                continue
            try:
                out[host][k] = hv[k]
            except Exception as e:  # pylint: disable=broad-except
                # An undefined variable in the value: the schema refuses
                # the text, naming the key (not a traceback).
                out[host][k] = 'cannot be templated: %s' % e
    return out


class FilterModule:
    def filters(self):
        return {'lab_owner': lab_owner,
                'lab_domain_meta': lab_domain_meta,
                'lab_domain_refusal': lab_domain_refusal,
                'lab_needs_define': lab_needs_define,
                'lab_teardown_pick': lab_teardown_pick,
                'lab_host_values': lab_host_values}
