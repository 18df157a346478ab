// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {JobFixture} from "./lib/JobFixtures.sol";
import {JobEscrow} from "../src/JobEscrow.sol";
import {IERC8183} from "../src/IERC8183.sol";
import {IERC8183Hook} from "../src/IERC8183Hook.sol";
import {Owned} from "../src/Owned.sol";
import {RecordingHook, ERC165LiarHook, NoERC165} from "./mocks/Hooks.sol";
import {FalseToken, NoReturnToken} from "./mocks/Tokens.sol";

/// @notice Every transition of an ERC-8183 job and every revert of JobEscrow, one by one.
contract JobEscrowTest is JobFixture {
    // --- constructor and administration ---

    function test_constructor_setsOwnerAndTreasury() public view {
        vm.assertEq(escrow.owner(), owner, "owner");
        vm.assertEq(escrow.platformTreasury(), treasury, "treasury");
        vm.assertEq(escrow.platformFeeBP(), 0, "no platform fee");
        vm.assertEq(escrow.evaluatorFeeBP(), 0, "no evaluator fee");
        vm.assertEq(escrow.jobCounter(), 0, "no jobs");
        vm.assertEq(escrow.EVALUATION_GRACE_PERIOD(), 1 hours, "grace period");
        vm.assertTrue(escrow.whitelistedHooks(address(0)), "no hook is always allowed");
    }

    function test_constructor_emitsTheTreasury() public {
        vm.expectEmit(true, true, true, true);
        emit IERC8183.PlatformFeeSet(0, treasury);
        new JobEscrow(owner, treasury);
    }

    function test_constructor_revertsOnZeroAddresses() public {
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        new JobEscrow(address(0), treasury);
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        new JobEscrow(owner, address(0));
    }

    function test_setPlatformFee_setsFeeAndTreasury() public {
        address next = makeAddr("next treasury");
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.PlatformFeeSet(250, next);
        vm.prank(owner);
        escrow.setPlatformFee(250, next);
        vm.assertEq(escrow.platformFeeBP(), 250, "fee");
        vm.assertEq(escrow.platformTreasury(), next, "treasury");
    }

    function test_setPlatformFee_revertsForNonOwner() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.setPlatformFee(1, treasury);
    }

    function test_setPlatformFee_revertsOnZeroTreasury() public {
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        vm.prank(owner);
        escrow.setPlatformFee(1, address(0));
    }

    function test_setPlatformFee_revertsWhenFeesExceedWhole() public {
        vm.prank(owner);
        escrow.setEvaluatorFee(4000);
        vm.expectRevert(IERC8183.FeesTooHigh.selector);
        vm.prank(owner);
        escrow.setPlatformFee(6001, treasury);
        vm.expectRevert(IERC8183.FeesTooHigh.selector);
        vm.prank(owner);
        escrow.setPlatformFee(type(uint256).max, treasury); // no overflow panic
        vm.prank(owner);
        escrow.setPlatformFee(6000, treasury);
        vm.assertEq(escrow.platformFeeBP(), 6000, "fees may add up to the whole");
    }

    function test_setEvaluatorFee_setsFee() public {
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.EvaluatorFeeSet(100);
        vm.prank(owner);
        escrow.setEvaluatorFee(100);
        vm.assertEq(escrow.evaluatorFeeBP(), 100, "fee");
    }

    function test_setEvaluatorFee_revertsForNonOwner() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.setEvaluatorFee(1);
    }

    function test_setEvaluatorFee_revertsWhenFeesExceedWhole() public {
        vm.prank(owner);
        escrow.setPlatformFee(9000, treasury);
        vm.expectRevert(IERC8183.FeesTooHigh.selector);
        vm.prank(owner);
        escrow.setEvaluatorFee(1001);
        vm.expectRevert(IERC8183.FeesTooHigh.selector);
        vm.prank(owner);
        escrow.setEvaluatorFee(type(uint256).max);
    }

    function test_setHookWhitelist_allowsAndDisallows() public {
        address hook = address(new RecordingHook());
        vm.assertFalse(escrow.whitelistedHooks(hook), "not allowed at first");
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.HookWhitelistUpdated(hook, true);
        vm.prank(owner);
        escrow.setHookWhitelist(hook, true);
        vm.assertTrue(escrow.whitelistedHooks(hook), "allowed");
        vm.prank(owner);
        escrow.setHookWhitelist(hook, false);
        vm.assertFalse(escrow.whitelistedHooks(hook), "allowed no more");
    }

    function test_setHookWhitelist_revertsForNonOwner() public {
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, stranger));
        vm.prank(stranger);
        escrow.setHookWhitelist(address(1), true);
    }

    function test_setHookWhitelist_revertsOnZeroHook() public {
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        vm.prank(owner);
        escrow.setHookWhitelist(address(0), false);
    }

    function test_ownership_movesInTwoSteps() public {
        address next = makeAddr("next owner");
        vm.prank(owner);
        escrow.transferOwnership(next);
        vm.assertEq(escrow.owner(), owner, "not yet");
        vm.expectRevert(abi.encodeWithSelector(Owned.NotPendingOwner.selector, stranger));
        vm.prank(stranger);
        escrow.acceptOwnership();
        vm.prank(next);
        escrow.acceptOwnership();
        vm.assertEq(escrow.owner(), next, "moved");
        vm.expectRevert(abi.encodeWithSelector(Owned.NotOwner.selector, owner));
        vm.prank(owner);
        escrow.setEvaluatorFee(1);
    }

    // --- createJob ---

    function test_createJob_storesTheJob() public {
        uint256 exp = expiry();
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobCreated(1, client, provider, evaluator, exp, address(0));
        vm.prank(client);
        uint256 id = escrow.createJob(provider, evaluator, exp, DESCRIPTION, address(0), 42);
        vm.assertEq(id, 1, "first id");
        vm.assertEq(escrow.jobCounter(), 1, "counter");
        IERC8183.Job memory j = escrow.getJob(id);
        vm.assertEq(j.id, 1, "id");
        vm.assertEq(j.client, client, "client");
        vm.assertEq(j.provider, provider, "provider");
        vm.assertEq(j.evaluator, evaluator, "evaluator");
        vm.assertEq(keccak256(bytes(j.description)), keccak256(bytes(DESCRIPTION)), "description");
        vm.assertEq(j.budget, 0, "budget");
        vm.assertEq(j.expiredAt, exp, "expiredAt");
        vm.assertEq(uint256(j.status), uint256(IERC8183.JobStatus.Open), "status");
        vm.assertEq(j.hook, address(0), "hook");
        vm.assertEq(j.paymentToken, address(0), "token");
        vm.assertEq(j.providerAgentId, 42, "agent id");
        vm.assertEq(j.submittedAt, 0, "submittedAt");
    }

    function test_jobs_isGetJobFlat() public {
        uint256 id = submitted(BUDGET);
        // jobs() returns getJob's fields as a flat tuple: its encoding is the struct's, without
        // the offset that getJob's single dynamic return value starts with.
        (bool ok, bytes memory flat) = address(escrow).staticcall(abi.encodeCall(IERC8183.jobs, (id)));
        vm.assertTrue(ok, "jobs");
        vm.assertEq(
            keccak256(abi.encodePacked(uint256(32), flat)), keccak256(abi.encode(escrow.getJob(id))), "same fields"
        );
        vm.assertEq(escrow.getJob(id).submittedAt, START, "submittedAt");
    }

    function test_getJob_unknownIdIsZero() public {
        open();
        IERC8183.Job memory j = escrow.getJob(2);
        vm.assertEq(j.id, 0, "id");
        vm.assertEq(j.client, address(0), "client");
        vm.assertEq(bytes(j.description).length, 0, "description");
        j = escrow.getJob(0);
        vm.assertEq(j.client, address(0), "id 0");
    }

    function test_createJob_idsCountUp() public {
        vm.assertEq(open(), 1, "one");
        vm.assertEq(open(), 2, "two");
        vm.assertEq(open(), 3, "three");
        vm.assertEq(escrow.jobCounter(), 3, "counter");
    }

    function test_createJob_withoutProviderIgnoresAgentId() public {
        vm.prank(client);
        uint256 id = escrow.createJob(address(0), evaluator, expiry(), "", address(0), 99);
        IERC8183.Job memory j = escrow.getJob(id);
        vm.assertEq(j.provider, address(0), "no provider");
        vm.assertEq(j.providerAgentId, 0, "the reference drops the agent id without a provider");
        vm.assertEq(bytes(j.description).length, 0, "empty description");
    }

    function test_createJob_evaluatorMayBeClient() public {
        vm.prank(client);
        uint256 id = escrow.createJob(provider, client, expiry(), "", address(0), 0);
        vm.assertEq(escrow.getJob(id).evaluator, client, "evaluator = client");
    }

    function test_createJob_revertsOnZeroEvaluator() public {
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        vm.prank(client);
        escrow.createJob(provider, address(0), expiry(), "", address(0), 0);
    }

    function test_createJob_revertsWhenProviderIsEvaluator() public {
        vm.expectRevert(IERC8183.ProviderCannotBeEvaluator.selector);
        vm.prank(client);
        escrow.createJob(evaluator, evaluator, expiry(), "", address(0), 0);
    }

    function test_createJob_revertsOnExpiryTooShort() public {
        vm.expectRevert(IERC8183.ExpiryTooShort.selector);
        vm.prank(client);
        escrow.createJob(provider, evaluator, block.timestamp + 5 minutes, "", address(0), 0);
        vm.expectRevert(IERC8183.ExpiryTooShort.selector);
        vm.prank(client);
        escrow.createJob(provider, evaluator, block.timestamp - 1, "", address(0), 0);
        vm.prank(client);
        escrow.createJob(provider, evaluator, block.timestamp + 5 minutes + 1, "", address(0), 0);
    }

    function test_createJob_revertsOnExpiryTooLong() public {
        uint256 tooLong = uint256(type(uint40).max) + 1;
        vm.expectRevert(abi.encodeWithSelector(JobEscrow.ExpiryTooLong.selector, tooLong));
        vm.prank(client);
        escrow.createJob(provider, evaluator, tooLong, "", address(0), 0);
        vm.prank(client);
        uint256 id = escrow.createJob(provider, evaluator, type(uint40).max, "", address(0), 0);
        vm.assertEq(escrow.getJob(id).expiredAt, type(uint40).max, "the longest expiry");
    }

    function test_createJob_revertsOnHookNotWhitelisted() public {
        address hook = address(new RecordingHook());
        vm.expectRevert(IERC8183.HookNotWhitelisted.selector);
        vm.prank(client);
        escrow.createJob(provider, evaluator, expiry(), "", hook, 0);
    }

    function test_createJob_revertsOnHookWithoutTheInterface() public {
        address[4] memory bad = [
            address(new ERC165LiarHook(false, false)), // ERC-165, but not the hook's interface
            address(new ERC165LiarHook(true, true)), // claims everything, 0xffffffff included
            address(new NoERC165()), // no supportsInterface
            makeAddr("an account without code")
        ];
        for (uint256 i = 0; i < bad.length; i++) {
            vm.prank(owner);
            escrow.setHookWhitelist(bad[i], true);
            vm.expectRevert(IERC8183.InvalidHook.selector);
            vm.prank(client);
            escrow.createJob(provider, evaluator, expiry(), "", bad[i], 0);
        }
        address good = address(new ERC165LiarHook(true, false));
        vm.prank(owner);
        escrow.setHookWhitelist(good, true);
        vm.prank(client);
        escrow.createJob(provider, evaluator, expiry(), "", good, 0);
    }

    function test_createJob_callsTheHookAfterOnly() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        vm.assertEq(hook.count(), 1, "one call");
        expectCall(hook, 0, false, id, IERC8183.createJob.selector, abi.encode(client, provider, evaluator));
        vm.assertEq(escrow.getJob(id).hook, address(hook), "hook stored");
    }

    function test_createJob_hookMayBlockIt() public {
        RecordingHook hook = allowedHook();
        hook.setRevert(IERC8183.createJob.selector, false);
        vm.expectRevert(abi.encodeWithSelector(RecordingHook.HookSaysNo.selector, IERC8183.createJob.selector, false));
        openWithHook(address(hook));
    }

    function test_createJob_storesDescriptionsOfEveryLength() public {
        bytes memory all = bytes(
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()_+-=[]{};':,./<>?0123456789abcdef"
        );
        for (uint256 n = 0; n <= all.length; n++) {
            bytes memory d = new bytes(n);
            for (uint256 i = 0; i < n; i++) {
                d[i] = all[i];
            }
            vm.prank(client);
            uint256 id = escrow.createJob(provider, evaluator, expiry(), string(d), address(0), 0);
            vm.assertEq(keccak256(bytes(escrow.getJob(id).description)), keccak256(d), "description round trip");
        }
    }

    // --- setProvider ---

    function test_setProvider_setsProviderAndAgentId() public {
        vm.prank(client);
        uint256 id = escrow.createJob(address(0), evaluator, expiry(), "", address(0), 0);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.ProviderSet(id, provider, 7);
        vm.prank(client);
        escrow.setProvider(id, provider, 7);
        IERC8183.Job memory j = escrow.getJob(id);
        vm.assertEq(j.provider, provider, "provider");
        vm.assertEq(j.providerAgentId, 7, "agent id");
    }

    function test_setProvider_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(client);
        escrow.setProvider(1, provider, 0);
    }

    function test_setProvider_revertsForNonClient() public {
        uint256 id = openWithoutProvider();
        vm.expectRevert(IERC8183.Unauthorized.selector);
        vm.prank(stranger);
        escrow.setProvider(id, provider, 0);
    }

    function test_setProvider_revertsWhenProviderSet() public {
        uint256 id = open();
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(client);
        escrow.setProvider(id, stranger, 0);
    }

    function test_setProvider_revertsWhenNotOpen() public {
        uint256 id = openWithoutProvider();
        vm.prank(client);
        escrow.reject(id, REASON, "");
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(client);
        escrow.setProvider(id, provider, 0);
    }

    function test_setProvider_revertsOnZeroProvider() public {
        uint256 id = openWithoutProvider();
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        vm.prank(client);
        escrow.setProvider(id, address(0), 0);
    }

    function test_setProvider_revertsWhenProviderIsEvaluator() public {
        uint256 id = openWithoutProvider();
        vm.expectRevert(IERC8183.ProviderCannotBeEvaluator.selector);
        vm.prank(client);
        escrow.setProvider(id, evaluator, 0);
    }

    function test_setProvider_callsNoHook() public {
        RecordingHook hook = allowedHook();
        vm.prank(client);
        uint256 id = escrow.createJob(address(0), evaluator, expiry(), "", address(hook), 0);
        hook.setRevert(IERC8183.setProvider.selector, true);
        vm.prank(client);
        escrow.setProvider(id, provider, 0);
        vm.assertEq(hook.count(), 1, "createJob's call only");
    }

    function test_fund_needsTheProvider() public {
        uint256 id = openWithoutProvider();
        budget(id, BUDGET);
        vm.expectRevert(IERC8183.ProviderNotSet.selector);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.prank(client);
        escrow.setProvider(id, provider, 0);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        assertStatus(id, IERC8183.JobStatus.Funded, "funded once the provider is set");
    }

    // --- setBudget ---

    function test_setBudget_byClient() public {
        uint256 id = open();
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.BudgetSet(id, address(token), BUDGET);
        budget(id, BUDGET);
        IERC8183.Job memory j = escrow.getJob(id);
        vm.assertEq(j.budget, BUDGET, "budget");
        vm.assertEq(j.paymentToken, address(token), "token");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "nothing moves");
    }

    function test_setBudget_byProviderAndAgain() public {
        uint256 id = open();
        vm.prank(provider);
        escrow.setBudget(id, address(token), BUDGET, "");
        vm.prank(provider);
        escrow.setBudget(id, address(token), 2 * BUDGET, "");
        vm.assertEq(escrow.getJob(id).budget, 2 * BUDGET, "the provider renegotiates the amount");
        vm.prank(client);
        escrow.setBudget(id, address(token), 0, "");
        vm.assertEq(escrow.getJob(id).budget, 0, "the client sets it to zero");
    }

    function test_setBudget_clientMaySwitchToken() public {
        uint256 id = open();
        budget(id, BUDGET);
        address other = makeAddr("other token");
        vm.prank(client);
        escrow.setBudget(id, other, BUDGET, "");
        vm.assertEq(escrow.getJob(id).paymentToken, other, "switched by the client");
    }

    function test_setBudget_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(client);
        escrow.setBudget(3, address(token), 1, "");
    }

    function test_setBudget_revertsWhenNotOpen() public {
        uint256 id = funded(BUDGET);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        budget(id, 1);
    }

    function test_setBudget_revertsForOthers() public {
        uint256 id = open();
        address[3] memory others = [evaluator, stranger, owner];
        for (uint256 i = 0; i < others.length; i++) {
            vm.expectRevert(IERC8183.Unauthorized.selector);
            vm.prank(others[i]);
            escrow.setBudget(id, address(token), 1, "");
        }
    }

    function test_setBudget_revertsOnZeroToken() public {
        uint256 id = open();
        vm.expectRevert(IERC8183.ZeroAddress.selector);
        vm.prank(client);
        escrow.setBudget(id, address(0), 1, "");
    }

    function test_setBudget_storesBudgetsOfAnySize() public {
        uint256 id = open();
        uint256[5] memory amounts =
            [uint256(type(uint96).max) - 1, type(uint96).max, uint256(type(uint96).max) + 1, type(uint256).max, 5];
        for (uint256 i = 0; i < amounts.length; i++) {
            budget(id, amounts[i]);
            vm.assertEq(escrow.getJob(id).budget, amounts[i], "budget round trip");
        }
    }

    function test_setBudget_callsTheHookBeforeAndAfter() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        vm.prank(provider);
        escrow.setBudget(id, address(token), BUDGET, hex"c0ffee");
        bytes memory data = abi.encode(provider, address(token), BUDGET, hex"c0ffee");
        vm.assertEq(hook.count(), 3, "createJob, then before and after");
        expectCall(hook, 1, true, id, IERC8183.setBudget.selector, data);
        expectCall(hook, 2, false, id, IERC8183.setBudget.selector, data);
    }

    function test_setBudget_hookMayBlockIt() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        hook.setRevert(IERC8183.setBudget.selector, true);
        vm.expectRevert(abi.encodeWithSelector(RecordingHook.HookSaysNo.selector, IERC8183.setBudget.selector, true));
        budget(id, BUDGET);
        hook.setRevert(IERC8183.setBudget.selector, false);
        vm.expectRevert(abi.encodeWithSelector(RecordingHook.HookSaysNo.selector, IERC8183.setBudget.selector, false));
        budget(id, BUDGET);
        vm.assertEq(escrow.getJob(id).budget, 0, "an after hook's revert undoes the change");
    }

    // --- fund ---

    function test_fund_escrowsTheBudget() public {
        uint256 id = open();
        budget(id, BUDGET);
        uint256 before = token.balanceOf(client);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobFunded(id, client, BUDGET);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        assertStatus(id, IERC8183.JobStatus.Funded, "funded");
        vm.assertEq(before - token.balanceOf(client), BUDGET, "client paid");
        vm.assertEq(token.balanceOf(address(escrow)), BUDGET, "escrow holds it");
    }

    function test_fund_zeroBudgetMovesNothing() public {
        uint256 id = open();
        budget(id, 0);
        vm.prank(client);
        escrow.fund(id, 0, "");
        assertStatus(id, IERC8183.JobStatus.Funded, "funded with nothing");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "nothing moved");
    }

    function test_fund_withoutBudgetSetFundsZero() public {
        uint256 id = open();
        vm.prank(client);
        escrow.fund(id, 0, "");
        assertStatus(id, IERC8183.JobStatus.Funded, "the reference funds a job with no budget set");
    }

    function test_fund_worksWithATokenReturningNothing() public {
        NoReturnToken usdt = new NoReturnToken();
        usdt.mint(client, BUDGET);
        vm.prank(client);
        usdt.approve(address(escrow), BUDGET);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(usdt), BUDGET, "");
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        vm.assertEq(usdt.balanceOf(provider), BUDGET, "paid in a token that returns nothing");
    }

    function test_fund_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(client);
        escrow.fund(1, 0, "");
    }

    function test_fund_revertsWhenNotOpen() public {
        uint256 id = funded(BUDGET);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
    }

    function test_fund_revertsForNonClient() public {
        uint256 id = open();
        budget(id, BUDGET);
        vm.expectRevert(IERC8183.Unauthorized.selector);
        vm.prank(provider);
        escrow.fund(id, BUDGET, "");
    }

    function test_fund_revertsOnBudgetMismatch() public {
        uint256 id = open();
        budget(id, BUDGET);
        vm.expectRevert(IERC8183.BudgetMismatch.selector);
        vm.prank(client);
        escrow.fund(id, BUDGET - 1, "");
    }

    function test_fund_revertsOnceExpired() public {
        uint256 id = open();
        budget(id, BUDGET);
        vm.warp(escrow.getJob(id).expiredAt);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.warp(block.timestamp - 1);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
    }

    function test_fund_revertsWhenTheTokenFails() public {
        FalseToken bad = new FalseToken();
        bad.mint(client, BUDGET);
        vm.prank(client);
        bad.approve(address(escrow), BUDGET);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(bad), BUDGET, "");
        vm.expectRevert(
            abi.encodeWithSelector(JobEscrow.TransferFailed.selector, address(bad), address(escrow), BUDGET)
        );
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        assertStatus(id, IERC8183.JobStatus.Open, "still open");
    }

    function test_fund_revertsWithoutAllowance() public {
        vm.prank(client);
        token.approve(address(escrow), BUDGET - 1);
        uint256 id = open();
        budget(id, BUDGET);
        vm.expectRevert(
            abi.encodeWithSelector(JobEscrow.TransferFailed.selector, address(token), address(escrow), BUDGET)
        );
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
    }

    function test_fund_callsTheHookBeforeAndAfter() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        budget(id, BUDGET);
        vm.prank(client);
        escrow.fund(id, BUDGET, hex"01");
        bytes memory data = abi.encode(client, hex"01");
        vm.assertEq(hook.count(), 5, "createJob, setBudget twice, fund twice");
        expectCall(hook, 3, true, id, IERC8183.fund.selector, data);
        expectCall(hook, 4, false, id, IERC8183.fund.selector, data);
    }

    function test_fund_hookMayBlockIt() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        budget(id, BUDGET);
        hook.setRevert(IERC8183.fund.selector, false);
        vm.expectRevert(abi.encodeWithSelector(RecordingHook.HookSaysNo.selector, IERC8183.fund.selector, false));
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "the after hook's revert undid the transfer");
    }

    // --- submit ---

    function test_submit_recordsTheDeliverable() public {
        uint256 id = funded(BUDGET);
        vm.warp(START + 100);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobSubmitted(id, provider, DELIVERABLE);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        assertStatus(id, IERC8183.JobStatus.Submitted, "submitted");
        vm.assertEq(escrow.getJob(id).submittedAt, START + 100, "submittedAt");
    }

    function test_submit_openJobWithZeroBudget() public {
        uint256 id = open();
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        assertStatus(id, IERC8183.JobStatus.Submitted, "a zero-budget job needs no funding");
    }

    function test_submit_revertsOnOpenJobWithBudget() public {
        uint256 id = open();
        budget(id, 1);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
    }

    function test_submit_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(provider);
        escrow.submit(9, DELIVERABLE, "");
    }

    function test_submit_revertsWhenSubmittedOrTerminal() public {
        uint256 id = submitted(BUDGET);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
    }

    function test_submit_revertsForNonProvider() public {
        uint256 id = funded(BUDGET);
        address[3] memory others = [client, evaluator, stranger];
        for (uint256 i = 0; i < others.length; i++) {
            vm.expectRevert(IERC8183.Unauthorized.selector);
            vm.prank(others[i]);
            escrow.submit(id, DELIVERABLE, "");
        }
    }

    function test_submit_callsTheHookBeforeAndAfter() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, hex"02");
        bytes memory data = abi.encode(provider, DELIVERABLE, hex"02");
        expectCall(hook, 1, true, id, IERC8183.submit.selector, data);
        expectCall(hook, 2, false, id, IERC8183.submit.selector, data);
    }

    // --- complete ---

    function test_complete_paysTheProvider() public {
        uint256 id = submitted(BUDGET);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobCompleted(id, evaluator, REASON);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.PaymentReleased(id, provider, BUDGET);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        assertStatus(id, IERC8183.JobStatus.Completed, "completed");
        vm.assertEq(token.balanceOf(provider), BUDGET, "paid in full: no fees");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }

    function test_complete_paysFees() public {
        vm.startPrank(owner);
        escrow.setPlatformFee(250, treasury);
        escrow.setEvaluatorFee(100);
        vm.stopPrank();
        uint256 id = submitted(BUDGET);
        uint256 platformFee = BUDGET * 250 / 10_000;
        uint256 evaluatorFee = BUDGET * 100 / 10_000;
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.PlatformFeePaid(id, treasury, platformFee);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.EvaluatorFeePaid(id, evaluator, evaluatorFee);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobCompleted(id, evaluator, REASON);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.PaymentReleased(id, provider, BUDGET - platformFee - evaluatorFee);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        vm.assertEq(token.balanceOf(treasury), platformFee, "treasury");
        vm.assertEq(token.balanceOf(evaluator), evaluatorFee, "evaluator");
        vm.assertEq(token.balanceOf(provider), BUDGET - platformFee - evaluatorFee, "provider");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "all of it paid out");
    }

    function test_complete_zeroBudgetPaysNothing() public {
        uint256 id = open();
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.PaymentReleased(id, provider, 0);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        assertStatus(id, IERC8183.JobStatus.Completed, "completed");
    }

    function test_complete_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(evaluator);
        escrow.complete(4, REASON, "");
    }

    function test_complete_revertsUnlessSubmitted() public {
        uint256 id = funded(BUDGET);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
    }

    function test_complete_revertsForNonEvaluator() public {
        uint256 id = submitted(BUDGET);
        address[3] memory others = [client, provider, stranger];
        for (uint256 i = 0; i < others.length; i++) {
            vm.expectRevert(IERC8183.Unauthorized.selector);
            vm.prank(others[i]);
            escrow.complete(id, REASON, "");
        }
    }

    function test_complete_revertsWhenThePayoutFails() public {
        FalseToken bad = new FalseToken();
        bad.setFailing(false);
        bad.mint(client, BUDGET);
        vm.prank(client);
        bad.approve(address(escrow), BUDGET);
        uint256 id = open();
        vm.prank(client);
        escrow.setBudget(id, address(bad), BUDGET, "");
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        bad.setFailing(true);
        vm.expectRevert(abi.encodeWithSelector(JobEscrow.TransferFailed.selector, address(bad), provider, BUDGET));
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        assertStatus(id, IERC8183.JobStatus.Submitted, "still submitted");
    }

    function test_complete_callsTheHookBeforeAndAfter() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.prank(evaluator);
        escrow.complete(id, REASON, hex"03");
        bytes memory data = abi.encode(evaluator, REASON, hex"03");
        expectCall(hook, 3, true, id, IERC8183.complete.selector, data);
        expectCall(hook, 4, false, id, IERC8183.complete.selector, data);
    }

    // --- reject ---

    function test_reject_openByClientRefundsNothing() public {
        uint256 id = open();
        budget(id, BUDGET);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobRejected(id, client, REASON);
        vm.prank(client);
        escrow.reject(id, REASON, "");
        assertStatus(id, IERC8183.JobStatus.Rejected, "rejected");
    }

    function test_reject_fundedByEvaluatorRefunds() public {
        uint256 id = funded(BUDGET);
        uint256 before = token.balanceOf(client);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.Refunded(id, client, BUDGET);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobRejected(id, evaluator, REASON);
        vm.prank(evaluator);
        escrow.reject(id, REASON, "");
        assertStatus(id, IERC8183.JobStatus.Rejected, "rejected");
        vm.assertEq(token.balanceOf(client) - before, BUDGET, "refunded");
    }

    function test_reject_submittedByEvaluatorRefunds() public {
        vm.prank(owner);
        escrow.setPlatformFee(500, treasury);
        uint256 id = submitted(BUDGET);
        uint256 before = token.balanceOf(client);
        vm.prank(evaluator);
        escrow.reject(id, REASON, "");
        vm.assertEq(token.balanceOf(client) - before, BUDGET, "refunded in full: no fee on a refund");
        vm.assertEq(token.balanceOf(treasury), 0, "no fee");
    }

    function test_reject_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        vm.prank(client);
        escrow.reject(1, REASON, "");
    }

    function test_reject_openRevertsForNonClient() public {
        uint256 id = open();
        address[3] memory others = [evaluator, provider, stranger];
        for (uint256 i = 0; i < others.length; i++) {
            vm.expectRevert(IERC8183.Unauthorized.selector);
            vm.prank(others[i]);
            escrow.reject(id, REASON, "");
        }
    }

    function test_reject_fundedRevertsForNonEvaluator() public {
        uint256 id = funded(BUDGET);
        address[3] memory others = [client, provider, stranger];
        for (uint256 i = 0; i < others.length; i++) {
            vm.expectRevert(IERC8183.Unauthorized.selector);
            vm.prank(others[i]);
            escrow.reject(id, REASON, "");
        }
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.expectRevert(IERC8183.Unauthorized.selector);
        vm.prank(client);
        escrow.reject(id, REASON, "");
    }

    function test_reject_revertsWhenTerminal() public {
        uint256 id = submitted(BUDGET);
        vm.prank(evaluator);
        escrow.complete(id, REASON, "");
        vm.expectRevert(IERC8183.WrongStatus.selector);
        vm.prank(evaluator);
        escrow.reject(id, REASON, "");
    }

    function test_reject_callsTheHookBeforeAndAfter() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        vm.prank(client);
        escrow.reject(id, REASON, hex"04");
        bytes memory data = abi.encode(client, REASON, hex"04");
        expectCall(hook, 1, true, id, IERC8183.reject.selector, data);
        expectCall(hook, 2, false, id, IERC8183.reject.selector, data);
    }

    // --- claimRefund ---

    function test_claimRefund_fundedAfterExpiryRefunds() public {
        uint256 id = funded(BUDGET);
        uint256 before = token.balanceOf(client);
        vm.warp(escrow.getJob(id).expiredAt);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.Refunded(id, client, BUDGET);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobExpired(id);
        vm.prank(stranger);
        escrow.claimRefund(id);
        assertStatus(id, IERC8183.JobStatus.Expired, "expired");
        vm.assertEq(token.balanceOf(client) - before, BUDGET, "refunded to the client, whoever calls");
    }

    function test_claimRefund_revertsBeforeExpiry() public {
        uint256 id = funded(BUDGET);
        vm.warp(escrow.getJob(id).expiredAt - 1);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        escrow.claimRefund(id);
    }

    function test_claimRefund_submittedWaitsForTheGracePeriod() public {
        uint256 id = funded(BUDGET);
        uint256 exp = escrow.getJob(id).expiredAt;
        vm.warp(exp - 10);
        vm.prank(provider);
        escrow.submit(id, DELIVERABLE, "");
        vm.warp(exp);
        vm.expectRevert(IERC8183.GracePeriodActive.selector);
        escrow.claimRefund(id);
        vm.warp(exp - 10 + 1 hours - 1);
        vm.expectRevert(IERC8183.GracePeriodActive.selector);
        escrow.claimRefund(id);
        vm.warp(exp - 10 + 1 hours);
        escrow.claimRefund(id);
        assertStatus(id, IERC8183.JobStatus.Expired, "expired after the grace period");
    }

    function test_claimRefund_submittedLongAgoHasNoGrace() public {
        uint256 id = submitted(BUDGET);
        vm.warp(escrow.getJob(id).expiredAt);
        escrow.claimRefund(id);
        assertStatus(id, IERC8183.JobStatus.Expired, "the grace period ran out before expiry");
    }

    function test_claimRefund_openExpires() public {
        uint256 id = open();
        vm.warp(escrow.getJob(id).expiredAt);
        vm.expectEmit(true, true, true, true, address(escrow));
        emit IERC8183.JobExpired(id);
        escrow.claimRefund(id);
        assertStatus(id, IERC8183.JobStatus.Expired, "expired");
    }

    function test_claimRefund_revertsOnUnknownJob() public {
        vm.expectRevert(IERC8183.InvalidJob.selector);
        escrow.claimRefund(1);
    }

    function test_claimRefund_revertsWhenTerminal() public {
        uint256 id = funded(BUDGET);
        vm.prank(evaluator);
        escrow.reject(id, REASON, "");
        vm.warp(escrow.getJob(id).expiredAt);
        vm.expectRevert(IERC8183.WrongStatus.selector);
        escrow.claimRefund(id);
    }

    function test_claimRefund_callsNoHook() public {
        RecordingHook hook = allowedHook();
        uint256 id = openWithHook(address(hook));
        budget(id, BUDGET);
        vm.prank(client);
        escrow.fund(id, BUDGET, "");
        uint256 calls = hook.count();
        hook.setRevert(IERC8183.claimRefund.selector, true);
        vm.warp(escrow.getJob(id).expiredAt);
        escrow.claimRefund(id);
        vm.assertEq(hook.count(), calls, "no hook call: a hook cannot block the refund");
        vm.assertEq(token.balanceOf(address(escrow)), 0, "refunded");
    }

    // --- the ABI is the reference's ---

    function test_abi_selectorsAreTheReferences() public pure {
        // Signatures written out from the reference's ABI (erc-8183/base-contracts c67e160).
        bytes4[22] memory ours = [
            IERC8183.createJob.selector,
            IERC8183.setProvider.selector,
            IERC8183.setBudget.selector,
            IERC8183.fund.selector,
            IERC8183.submit.selector,
            IERC8183.complete.selector,
            IERC8183.reject.selector,
            IERC8183.claimRefund.selector,
            IERC8183.getJob.selector,
            IERC8183.jobs.selector,
            IERC8183.jobCounter.selector,
            IERC8183.EVALUATION_GRACE_PERIOD.selector,
            IERC8183.platformFeeBP.selector,
            IERC8183.evaluatorFeeBP.selector,
            IERC8183.platformTreasury.selector,
            IERC8183.whitelistedHooks.selector,
            IERC8183.setPlatformFee.selector,
            IERC8183.setEvaluatorFee.selector,
            IERC8183.setHookWhitelist.selector,
            IERC8183Hook.beforeAction.selector,
            IERC8183Hook.afterAction.selector,
            type(IERC8183Hook).interfaceId
        ];
        bytes4[22] memory ref = [
            bytes4(keccak256("createJob(address,address,uint256,string,address,uint256)")),
            bytes4(keccak256("setProvider(uint256,address,uint256)")),
            bytes4(keccak256("setBudget(uint256,address,uint256,bytes)")),
            bytes4(keccak256("fund(uint256,uint256,bytes)")),
            bytes4(keccak256("submit(uint256,bytes32,bytes)")),
            bytes4(keccak256("complete(uint256,bytes32,bytes)")),
            bytes4(keccak256("reject(uint256,bytes32,bytes)")),
            bytes4(keccak256("claimRefund(uint256)")),
            bytes4(keccak256("getJob(uint256)")),
            bytes4(keccak256("jobs(uint256)")),
            bytes4(keccak256("jobCounter()")),
            bytes4(keccak256("EVALUATION_GRACE_PERIOD()")),
            bytes4(keccak256("platformFeeBP()")),
            bytes4(keccak256("evaluatorFeeBP()")),
            bytes4(keccak256("platformTreasury()")),
            bytes4(keccak256("whitelistedHooks(address)")),
            bytes4(keccak256("setPlatformFee(uint256,address)")),
            bytes4(keccak256("setEvaluatorFee(uint256)")),
            bytes4(keccak256("setHookWhitelist(address,bool)")),
            bytes4(keccak256("beforeAction(uint256,bytes4,bytes)")),
            bytes4(keccak256("afterAction(uint256,bytes4,bytes)")),
            bytes4(keccak256("beforeAction(uint256,bytes4,bytes)"))
                ^ bytes4(keccak256("afterAction(uint256,bytes4,bytes)"))
        ];
        for (uint256 i = 0; i < ours.length; i++) {
            vm.assertEq(bytes32(ours[i]), bytes32(ref[i]), "selector");
        }
    }

    function test_abi_eventsAndErrorsAreTheReferences() public pure {
        bytes32[15] memory events = [
            IERC8183.JobCreated.selector,
            IERC8183.ProviderSet.selector,
            IERC8183.BudgetSet.selector,
            IERC8183.JobFunded.selector,
            IERC8183.JobSubmitted.selector,
            IERC8183.JobCompleted.selector,
            IERC8183.JobRejected.selector,
            IERC8183.JobExpired.selector,
            IERC8183.PaymentReleased.selector,
            IERC8183.PlatformFeePaid.selector,
            IERC8183.EvaluatorFeePaid.selector,
            IERC8183.Refunded.selector,
            IERC8183.HookWhitelistUpdated.selector,
            IERC8183.PlatformFeeSet.selector,
            IERC8183.EvaluatorFeeSet.selector
        ];
        bytes32[15] memory refEvents = [
            keccak256("JobCreated(uint256,address,address,address,uint256,address)"),
            keccak256("ProviderSet(uint256,address,uint256)"),
            keccak256("BudgetSet(uint256,address,uint256)"),
            keccak256("JobFunded(uint256,address,uint256)"),
            keccak256("JobSubmitted(uint256,address,bytes32)"),
            keccak256("JobCompleted(uint256,address,bytes32)"),
            keccak256("JobRejected(uint256,address,bytes32)"),
            keccak256("JobExpired(uint256)"),
            keccak256("PaymentReleased(uint256,address,uint256)"),
            keccak256("PlatformFeePaid(uint256,address,uint256)"),
            keccak256("EvaluatorFeePaid(uint256,address,uint256)"),
            keccak256("Refunded(uint256,address,uint256)"),
            keccak256("HookWhitelistUpdated(address,bool)"),
            keccak256("PlatformFeeSet(uint256,address)"),
            keccak256("EvaluatorFeeSet(uint256)")
        ];
        for (uint256 i = 0; i < events.length; i++) {
            vm.assertEq(events[i], refEvents[i], "event topic");
        }
        bytes4[13] memory errors = [
            IERC8183.InvalidJob.selector,
            IERC8183.InvalidHook.selector,
            IERC8183.WrongStatus.selector,
            IERC8183.Unauthorized.selector,
            IERC8183.ZeroAddress.selector,
            IERC8183.ExpiryTooShort.selector,
            IERC8183.ZeroBudget.selector,
            IERC8183.ProviderNotSet.selector,
            IERC8183.FeesTooHigh.selector,
            IERC8183.HookNotWhitelisted.selector,
            IERC8183.BudgetMismatch.selector,
            IERC8183.ProviderCannotBeEvaluator.selector,
            IERC8183.GracePeriodActive.selector
        ];
        string[13] memory refErrors = [
            "InvalidJob()",
            "InvalidHook()",
            "WrongStatus()",
            "Unauthorized()",
            "ZeroAddress()",
            "ExpiryTooShort()",
            "ZeroBudget()",
            "ProviderNotSet()",
            "FeesTooHigh()",
            "HookNotWhitelisted()",
            "BudgetMismatch()",
            "ProviderCannotBeEvaluator()",
            "GracePeriodActive()"
        ];
        for (uint256 i = 0; i < errors.length; i++) {
            vm.assertEq(bytes32(errors[i]), bytes32(bytes4(keccak256(bytes(refErrors[i])))), refErrors[i]);
        }
    }

    // --- helpers ---

    function allowedHook() internal returns (RecordingHook hook) {
        hook = new RecordingHook();
        vm.prank(owner);
        escrow.setHookWhitelist(address(hook), true);
    }

    function openWithoutProvider() internal returns (uint256 id) {
        vm.prank(client);
        id = escrow.createJob(address(0), evaluator, expiry(), DESCRIPTION, address(0), 0);
    }

    function expectCall(RecordingHook hook, uint256 i, bool before, uint256 id, bytes4 selector, bytes memory data)
        internal
        view
    {
        RecordingHook.Call memory c = hook.callAt(i);
        vm.assertEq(c.before, before, "before or after");
        vm.assertEq(c.jobId, id, "job id");
        vm.assertEq(bytes32(c.selector), bytes32(selector), "selector");
        vm.assertEq(keccak256(c.data), keccak256(data), "data as the ERC's table encodes it");
        vm.assertEq(c.sender, address(escrow), "called by the escrow");
    }
}
