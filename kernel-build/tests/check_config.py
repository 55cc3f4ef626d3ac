#!/usr/bin/env python3
"""Check lab kernel configs against Debian's and the guests' needs.

check_config.py --src TREE --debian CONFIG --equal LIST --differences LIST
                --critical LIST FLAVOUR=DOTCONFIG...

- Every option of the equal list (config/debian-equal.list) has Debian's
  value in each flavour's .config, or a difference recorded with its reason
  in the differences list (config/debian-differences.list: OPTION VALUE
  FLAVOURS REASON, FLAVOURS '*' or a comma list).  A recorded difference
  that no longer occurs, or records another value, fails too.
- Every guest-critical option (config/guest-critical.list) is =y.
Exit 1 with one line per finding, 0 when all hold.
"""
import argparse
import glob
import os
import re
import sys

SYMBOL = re.compile(r'^\s*(?:menu)?config\s+(\w+)\s*$')


def load_config(path):
    """{CONFIG_X: value} of a .config; '# CONFIG_X is not set' is 'n'."""
    values = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'^(CONFIG_\w+)=(.*)$', line)
            if m:
                values[m.group(1)] = m.group(2)
                continue
            m = re.match(r'^# (CONFIG_\w+) is not set$', line)
            if m:
                values[m.group(1)] = 'n'
    return values


def lines(path):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if line and not line.startswith('#'):
                yield number, line


def kconfig_symbols(path):
    symbols = []
    with open(path) as f:
        for line in f:
            m = SYMBOL.match(line)
            if m:
                symbols.append('CONFIG_' + m.group(1))
    return symbols


def equal_set(path, src):
    """Ordered symbols of the equal list; 'kconfig FILE' expands."""
    symbols, problems = [], []
    for number, line in lines(path):
        words = line.split()
        if words[0] == 'kconfig' and len(words) == 2:
            try:
                symbols += kconfig_symbols('%s/%s' % (src, words[1]))
            except OSError as e:
                problems.append('%s:%d: %s' % (path, number, e))
        elif re.match(r'^CONFIG_\w+$', words[0]) and len(words) == 1:
            symbols.append(words[0])
        else:
            problems.append('%s:%d: cannot parse %r' % (path, number, line))
    return list(dict.fromkeys(symbols)), problems


def differences(path):
    """{(symbol, flavour or '*'): (value, line number)}"""
    recorded, problems = {}, []
    for number, line in lines(path):
        words = line.split(None, 3)
        if len(words) < 4 or not re.match(r'^CONFIG_\w+$', words[0]):
            problems.append('%s:%d: want OPTION VALUE FLAVOURS REASON: %r'
                            % (path, number, line))
            continue
        for flavour in words[2].split(','):
            recorded[(words[0], flavour)] = (words[1], number)
    return recorded, problems


def same(debian, lab):
    """Debian's =m is the lab's =y; absent is n."""
    return debian == lab or (debian == 'm' and lab == 'y')


def check_equal(name, lab, debian, symbols, recorded, used, path):
    problems = []
    for s in symbols:
        key = (s, name) if (s, name) in recorded else (s, '*')
        entry = recorded.get(key)
        d, v = debian.get(s, 'n'), lab.get(s, 'n')
        if same(d, v):
            if entry:
                problems.append(
                    '%s: %s %s equals Debian now: drop %s:%d'
                    % (name, s, v, path, entry[1]))
            continue
        if not entry:
            problems.append(
                '%s: %s is %s, Debian has %s, and %s records no reason'
                % (name, s, v, d, path.rsplit('/', 1)[-1]))
        elif entry[0] != v:
            problems.append(
                '%s: %s is %s, but %s:%d records %s'
                % (name, s, v, path, entry[1], entry[0]))
        else:
            used.add(key)
    return problems


def check_critical(name, lab, path):
    problems = []
    for number, line in lines(path):
        words = line.split()
        if len(words) > 2 or not re.match(r'^CONFIG_\w+$', words[0]):
            problems.append('%s:%d: cannot parse %r' % (path, number, line))
            continue
        if len(words) == 2 and name not in words[1].split(','):
            continue
        if lab.get(words[0], 'n') != 'y':
            problems.append('%s: guest-critical %s is %s, not y'
                            % (name, words[0], lab.get(words[0], 'n')))
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    for a in ('src', 'debian', 'equal', 'differences', 'critical'):
        p.add_argument('--' + a, required=True)
    p.add_argument('configs', nargs='+', metavar='FLAVOUR=DOTCONFIG')
    args = p.parse_args(argv)

    debian = load_config(args.debian)
    symbols, problems = equal_set(args.equal, args.src)
    recorded, more = differences(args.differences)
    problems += more
    unknown = sorted({s for s, _ in recorded} - set(symbols))
    problems += ['%s: %s is not in %s' % (args.differences, s, args.equal)
                 for s in unknown]
    used = set()
    checked = {item.partition('=')[0] for item in args.configs}
    for item in args.configs:
        name, _, path = item.partition('=')
        lab = load_config(path)
        problems += check_equal(name, lab, debian, symbols, recorded, used,
                                args.differences)
        problems += check_critical(name, lab, args.critical)
        n = sum(1 for s in symbols if s in debian or s in lab)
        print('%s: %d options compared with Debian, %d recorded differences'
              % (name, n, sum(1 for k in used if k[1] in (name, '*'))))
    known = {os.path.basename(f)[:-len('.config')] for f in glob.glob(
        os.path.join(os.path.dirname(args.differences), '*.config'))}
    known -= {'base', 'debian'}
    for (s, flavour), (_, number) in sorted(recorded.items()):
        if flavour not in known | checked | {'*'}:
            problems.append('%s:%d: unknown flavour %s'
                            % (args.differences, number, flavour))
    for line in dict.fromkeys(problems):
        print('check-config: ' + line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
