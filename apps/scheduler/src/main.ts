import 'reflect-metadata';
import { loadConfigOrExit } from '@switchyard/server-config';
import { runService } from '@switchyard/server-runtime';
import { schedulerOptions } from './bootstrap';

void runService(schedulerOptions(loadConfigOrExit('scheduler')));
