import 'reflect-metadata';
import { loadConfigOrExit } from '@switchyard/server-config';
import { runService } from '@switchyard/server-runtime';
import { toolRegistryOptions } from './bootstrap';

void runService(toolRegistryOptions(loadConfigOrExit('tool-registry')));
