import 'reflect-metadata';
import { loadConfigOrExit } from '@switchyard/server-config';
import { runService } from '@switchyard/server-runtime';
import { executorOptions } from './bootstrap';

void runService(executorOptions(loadConfigOrExit('executor')));
