# hugelab stdout callback: Ansible's default output, except for the retries
# of a progress wait (the job_wait role): each try prints the one
# line its files/job-wait wrote ("progress: ...") instead of
# "FAILED - RETRYING: ... (N retries left)".
from ansible.plugins.callback.default import CallbackModule as Default

DOCUMENTATION = '''
    name: hugelab
    type: stdout
    short_description: default output with readable progress lines
    description:
      - Ansible's default stdout callback; a retried task whose stdout ends
        with a line starting "progress:" prints that line instead of
        "FAILED - RETRYING".
    extends_documentation_fragment:
      - default_callback
      - result_format_callback
    requirements:
      - set as stdout in configuration
'''

PREFIX = 'progress: '


class CallbackModule(Default):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'hugelab'

    def v2_runner_retry(self, result):
        lines = [x for x in result._result.get('stdout_lines') or []
                 if x.startswith(PREFIX)]
        if not lines:
            super().v2_runner_retry(result)
            return
        line = lines[-1][len(PREFIX):]
        self._display.display('[%s] %s' % (self.host_label(result), line))
