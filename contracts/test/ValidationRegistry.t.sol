// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {ERC721} from "../src/ERC721.sol";
import {IdentityRegistry} from "../src/IdentityRegistry.sol";
import {ValidationRegistry} from "../src/ValidationRegistry.sol";
import {IValidationRegistry} from "../src/IValidationRegistry.sol";

contract ValidationRegistryTest is Test {
    event ValidationRequest(
        address indexed validatorAddress, uint256 indexed agentId, string requestURI, bytes32 indexed requestHash
    );
    event ValidationResponse(
        address indexed validatorAddress,
        uint256 indexed agentId,
        bytes32 indexed requestHash,
        uint8 response,
        string responseURI,
        bytes32 responseHash,
        string tag
    );

    IdentityRegistry internal identity;
    ValidationRegistry internal val;
    address internal owner = makeAddr("owner");
    address internal operator = makeAddr("operator");
    address internal validator = makeAddr("validator");
    address internal validator2 = makeAddr("validator2");
    address internal stranger = makeAddr("stranger");
    uint256 internal agent;
    bytes32 internal constant REQ = keccak256("request");

    function setUp() public {
        vm.warp(1_700_000_000);
        identity = new IdentityRegistry();
        val = new ValidationRegistry(address(identity));
        vm.startPrank(owner);
        agent = identity.register("ipfs://agent");
        identity.setApprovalForAll(operator, true);
        vm.stopPrank();
    }

    function _request(address v, bytes32 h) internal {
        vm.prank(owner);
        val.validationRequest(v, agent, "ipfs://req", h);
    }

    function test_getIdentityRegistry() public view {
        vm.assertEq(val.getIdentityRegistry(), address(identity), "identity");
    }

    function test_validationRequest_recordsAndEmits() public {
        vm.expectEmit(true, true, true, true, address(val));
        emit ValidationRequest(validator, agent, "ipfs://req", REQ);
        _request(validator, REQ);
        (address v, uint256 a, uint8 r, bytes32 rh, string memory tag, uint256 last) = val.getValidationStatus(REQ);
        vm.assertEq(v, validator, "validator");
        vm.assertEq(a, agent, "agent");
        vm.assertEq(uint256(r), 0, "no response");
        vm.assertEq(rh, bytes32(0), "no hash");
        vm.assertEq(bytes(tag).length, 0, "no tag");
        vm.assertEq(last, block.timestamp, "time");
        vm.assertEq(val.getAgentValidations(agent)[0], REQ, "agent list");
        vm.assertEq(val.getValidatorRequests(validator)[0], REQ, "validator list");
    }

    function test_validationRequest_byOperator() public {
        vm.prank(operator);
        val.validationRequest(validator, agent, "ipfs://req", REQ);
        (address v,,,,,) = val.getValidationStatus(REQ);
        vm.assertEq(v, validator, "validator");
    }

    function test_validationRequest_zeroValidator() public {
        vm.prank(owner);
        vm.expectRevert(IValidationRegistry.ZeroValidator.selector);
        val.validationRequest(address(0), agent, "", REQ);
    }

    function test_validationRequest_exists() public {
        _request(validator, REQ);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.RequestExists.selector, REQ));
        val.validationRequest(validator2, agent, "", REQ);
    }

    function test_validationRequest_stranger() public {
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.NotAuthorized.selector, stranger, agent));
        val.validationRequest(validator, agent, "", REQ);
    }

    function test_validationRequest_unknownAgent() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 5));
        val.validationRequest(validator, 5, "", REQ);
    }

    function test_validationResponse_updatesAndEmits() public {
        _request(validator, REQ);
        vm.warp(block.timestamp + 10);
        vm.expectEmit(true, true, true, true, address(val));
        emit ValidationResponse(validator, agent, REQ, 100, "ipfs://ev", keccak256("ev"), "hard");
        vm.prank(validator);
        val.validationResponse(REQ, 100, "ipfs://ev", keccak256("ev"), "hard");
        (,, uint8 r, bytes32 rh, string memory tag, uint256 last) = val.getValidationStatus(REQ);
        vm.assertEq(uint256(r), 100, "response");
        vm.assertEq(rh, keccak256("ev"), "hash");
        vm.assertEq(keccak256(bytes(tag)), keccak256("hard"), "tag");
        vm.assertEq(last, block.timestamp, "time");
        vm.prank(validator);
        val.validationResponse(REQ, 40, "", bytes32(0), "soft");
        (,, r,,,) = val.getValidationStatus(REQ);
        vm.assertEq(uint256(r), 40, "updated");
    }

    function test_validationResponse_unknown() public {
        vm.prank(validator);
        vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.UnknownRequest.selector, REQ));
        val.validationResponse(REQ, 1, "", bytes32(0), "");
    }

    function test_validationResponse_notValidator() public {
        _request(validator, REQ);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.NotValidator.selector, owner, validator));
        val.validationResponse(REQ, 1, "", bytes32(0), "");
    }

    function testFuzz_validationResponse_range(uint8 response) public {
        _request(validator, REQ);
        if (response > 100) {
            vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.ResponseOutOfRange.selector, response));
        }
        vm.prank(validator);
        val.validationResponse(REQ, response, "", bytes32(0), "");
    }

    function test_getValidationStatus_unknown() public {
        vm.expectRevert(abi.encodeWithSelector(IValidationRegistry.UnknownRequest.selector, REQ));
        val.getValidationStatus(REQ);
    }

    function test_getSummary_filters() public {
        _request(validator, keccak256("1"));
        _request(validator, keccak256("2"));
        _request(validator2, keccak256("3"));
        _request(validator2, keccak256("4")); // never answered: left out
        vm.startPrank(validator);
        val.validationResponse(keccak256("1"), 100, "", bytes32(0), "hard");
        val.validationResponse(keccak256("2"), 51, "", bytes32(0), "soft");
        vm.stopPrank();
        vm.prank(validator2);
        val.validationResponse(keccak256("3"), 0, "", bytes32(0), "hard");
        (uint64 count, uint8 avg) = val.getSummary(agent, new address[](0), "");
        vm.assertEq(uint256(count), 3, "count");
        vm.assertEq(uint256(avg), 50, "average rounds down");
        address[] memory only = new address[](1);
        only[0] = validator;
        (count, avg) = val.getSummary(agent, only, "");
        vm.assertEq(uint256(count), 2, "by validator");
        vm.assertEq(uint256(avg), 75, "by validator avg");
        (count, avg) = val.getSummary(agent, new address[](0), "hard");
        vm.assertEq(uint256(count), 2, "by tag");
        vm.assertEq(uint256(avg), 50, "by tag avg");
        (count, avg) = val.getSummary(agent + 1, new address[](0), "");
        vm.assertEq(uint256(count), 0, "other agent");
        vm.assertEq(val.getValidatorRequests(validator2).length, 2, "validator2 list");
        vm.assertEq(val.getAgentValidations(agent).length, 4, "agent list");
    }

    function testFuzz_getSummary_averageOfResponses(uint8[5] memory responses) public {
        uint256 total;
        for (uint256 i; i < responses.length; ++i) {
            uint8 r = uint8(bound(responses[i], 0, 100));
            bytes32 h = keccak256(abi.encode(i));
            _request(validator, h);
            vm.prank(validator);
            val.validationResponse(h, r, "", bytes32(0), "");
            total += r;
        }
        (uint64 count, uint8 avg) = val.getSummary(agent, new address[](0), "");
        vm.assertEq(uint256(count), 5, "count");
        vm.assertEq(uint256(avg), total / 5, "average");
    }
}
